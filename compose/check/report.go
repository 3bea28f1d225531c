package check

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/agentbox/agentbox/audit"
	"github.com/agentbox/agentbox/compose"
)

// WriteFindings writes every finding of r that fails, one per entry: where it
// is, what it is, and the change to the compose file that fixes it. It
// returns how many it wrote.
func WriteFindings(w io.Writer, r audit.Report) (int, error) {
	n := 0
	for _, c := range r.Containers {
		svc := serviceName(c.Name)
		for _, f := range c.Findings {
			if !f.Fails() {
				continue
			}
			n++
			unknown := ""
			if f.Unknown {
				unknown = " (cannot be read: fails closed)"
			}
			if _, err := fmt.Fprintf(w, "%s%s: %s %s: %s%s\n  fix: %s\n", where(f, c), svc, f.Code, f.Subject, f.Detail, unknown, Fix(f, svc)); err != nil {
				return n, err
			}
		}
	}
	return n, nil
}

// WriteResiduals writes the findings of r that do not fail, each with the
// reason it is tolerated: accepted ones with their written reason,
// informational ones with why they remain.
func WriteResiduals(w io.Writer, r audit.Report) error {
	for _, c := range r.Containers {
		svc := serviceName(c.Name)
		for _, f := range c.Findings {
			if f.Fails() {
				continue
			}
			kind, reason := "informational", f.Detail
			if f.Accepted {
				kind, reason = "accepted", f.AcceptedReason
			} else if f.Code == audit.CodeNoUserNS {
				reason = UserNSReason
			}
			if _, err := fmt.Fprintf(w, "  %s: %s %s (%s): %s\n", svc, f.Code, f.Subject, kind, reason); err != nil {
				return err
			}
		}
	}
	return nil
}

func where(f audit.Finding, c audit.ContainerReport) string {
	switch {
	case f.File != "" && f.Line > 0:
		return fmt.Sprintf("%s:%d: ", f.File, f.Line)
	case c.File != "":
		return c.File + ": "
	}
	return ""
}

// serviceName is the compose service of a container name
// (project_service_1 for docker-compose 1.x, project-service-1 for v2).
func serviceName(name string) string {
	for _, sep := range []string{"_", "-"} {
		parts := strings.Split(name, sep)
		if len(parts) >= 3 && isNumber(parts[len(parts)-1]) {
			return parts[len(parts)-2]
		}
	}
	return name
}

func isNumber(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// WriteSummary tells the user what was written to dir, what the audit
// tolerated and why, what the host cannot provide, what to do before `up`,
// and how to start the project.
func WriteSummary(w io.Writer, dir string, out *compose.Output, r audit.Report, res compose.WriteResult) error {
	var b strings.Builder
	fmt.Fprintf(&b, "agentbox compose: %s\n", dir)
	for _, l := range []struct {
		what  string
		names []string
	}{{"wrote", res.Written}, {"unchanged", res.Unchanged}, {"kept (never overwritten)", res.Kept}} {
		if len(l.names) > 0 {
			fmt.Fprintf(&b, "  %s: %s\n", l.what, strings.Join(l.names, ", "))
		}
	}
	fmt.Fprintf(&b, "agent: %s adapter, permission mode %s (%s)\n", out.Agent, out.Permission.Mode, out.Permission.Source)
	fmt.Fprintf(&b, "audit: %d failing finding(s); tolerated, with reasons:\n", len(r.Unaccepted()))
	if err := WriteResiduals(&b, r); err != nil {
		return err
	}
	for _, res := range out.Residuals {
		fmt.Fprintf(&b, "  host: %s: %s\n", res.Code, res.Reason)
	}
	if len(out.Notes) > 0 {
		fmt.Fprintln(&b, "before up:")
		for _, n := range out.Notes {
			fmt.Fprintf(&b, "  - %s\n", n)
		}
	}
	file := filepath.Join(dir, compose.ComposeFile)
	fmt.Fprintf(&b, "start the agent (the gateway starts first; its image %s is built from %s on first use):\n", out.GatewayImage, filepath.Join(dir, compose.BuildDir))
	fmt.Fprintf(&b, "  docker-compose -f %s run --rm %s    (or: docker compose, podman compose)\n", file, compose.AgentService)
	fmt.Fprintf(&b, "check it after any edit: agentbox compose --check %s\n", file)
	_, err := io.WriteString(w, b.String())
	return err
}
