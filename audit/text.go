package audit

import (
	"fmt"
	"io"
	"strings"
)

// ANSI colours, used only when the caller says the output is a terminal.
const (
	ansiReset  = "\x1b[0m"
	ansiBold   = "\x1b[1m"
	ansiRed    = "\x1b[31m"
	ansiYellow = "\x1b[33m"
	ansiCyan   = "\x1b[36m"
	ansiGreen  = "\x1b[32m"
	ansiDim    = "\x1b[2m"
)

// textWriter writes the human report; it remembers the first write error.
type textWriter struct {
	w     io.Writer
	color bool
	err   error
}

func (t *textWriter) printf(format string, a ...any) {
	if t.err == nil {
		_, t.err = fmt.Fprintf(t.w, format, a...)
	}
}

func (t *textWriter) paint(code, s string) string {
	if !t.color || code == "" {
		return s
	}
	return code + s + ansiReset
}

// WriteText writes the report in the lab's sections (Mounts, Environment,
// Network, Privileges, Findings) and "N finding(s)." per container, where N
// counts the findings that fail; accepted and informational findings are
// listed and marked. Environment values are never written. color adds ANSI
// colours (for a terminal).
func WriteText(w io.Writer, r Report, color bool) error {
	t := &textWriter{w: w, color: color}
	total := 0
	for i, c := range r.Containers {
		if i > 0 {
			t.printf("\n")
		}
		total += t.container(c)
	}
	if len(r.Containers) > 1 {
		t.printf("\n%d finding(s) in %d containers.\n", total, len(r.Containers))
	}
	return t.err
}

func (t *textWriter) container(c ContainerReport) int {
	m := c.Model
	head := c.Name + " (" + c.Source
	if m.File != "" {
		head += ", " + locString(Location{File: m.File, Line: m.Line})
	}
	if len(m.Profiles) > 0 {
		head += ", profiles: " + strings.Join(m.Profiles, ", ")
	}
	t.printf("%s\n", t.paint(ansiBold, "== "+head+") =="))
	if c.Account != nil {
		t.account(c.Account)
	} else {
		t.mounts(m)
		t.env(m)
		t.network(m)
		t.privileges(m)
	}
	t.printf("permission_mode: %s\n", c.PermissionMode)
	for _, n := range c.Notes {
		t.printf("note: %s\n", n)
	}
	if m.PodSecurity != nil {
		t.printf("pod_security: %s\n", m.PodSecurity)
	}
	return t.findings(c.Findings)
}

func (t *textWriter) section(name string) { t.printf("%s\n", t.paint(ansiBold, name)) }

func (t *textWriter) mounts(m Container) {
	t.section("Mounts")
	if len(m.Mounts) == 0 {
		t.printf("  (none)\n")
	}
	for _, x := range m.Mounts {
		mode := "rw"
		if x.ReadOnly {
			mode = "ro"
		}
		note := ""
		switch {
		case !isHostMount(x):
		case m.LabeledWorkspace != "" && x.hostPath() == m.LabeledWorkspace:
			note = "  [" + LabeledWorkspaceNote + "]"
		case m.PresumedWorkspace != "" && x.hostPath() == m.PresumedWorkspace:
			note = "  [" + PresumedWorkspaceNote + "]"
		}
		t.printf("  %-6s %s -> %s (%s)%s%s\n", orDefault(x.Type, "bind"), orDefault(x.Source, "-"), x.Destination, mode, atLocation(x.Location), note)
	}
}

func (t *textWriter) env(m Container) {
	t.section("Environment")
	if len(m.Env) == 0 {
		t.printf("  (none)\n")
	}
	for _, e := range m.Env {
		note := ""
		switch {
		case e.FromHost:
			note = " (passed through from the caller)"
		case e.FromSecret:
			note = " (from a Kubernetes Secret: " + e.From + ")"
		case SecretName(e.Name) || secretShape(e.Value) != "":
			note = " (credential, value withheld)"
		}
		t.printf("  %s%s\n", e.Name, note)
	}
}

func (t *textWriter) network(m Container) {
	t.section("Network")
	t.printf("  mode: %s\n", orDefault(m.NetworkMode, "default"))
	for _, n := range m.Networks {
		t.printf("  network %s: internal=%s\n", n.Name, n.Internal)
	}
}

func (t *textWriter) privileges(m Container) {
	t.section("Privileges")
	t.printf("  user: %s  userns: %s  privileged: %s\n", orDefault(m.User, "(image default)"), m.UserNS, yesNo(m.Privileged))
	t.printf("  read-only root: %s  no-new-privileges: %s\n", yesNo(m.ReadOnlyRoot), m.NoNewPrivileges)
	caps := "unknown"
	if m.CapsKnown {
		caps = orDefault(strings.Join(m.Caps, ","), "none")
	}
	t.printf("  capabilities: %s\n", caps)
	t.printf("  seccomp: %s  apparmor: %s  selinux: %s\n", seccompString(m.Seccomp), orDefault(m.AppArmor, "-"), orDefault(strings.Join(m.SELinux, ","), "-"))
	t.printf("  pid: %s  ipc: %s  uts: %s\n", orDefault(m.PidMode, "private"), orDefault(m.IpcMode, "private"), orDefault(m.UTSMode, "private"))
	t.printf("  limits: memory %s, pids %s, cpus %s\n", limitString(m.MemoryLimit, true), limitString(m.PidsLimit, false), cpuString(m.CPULimit))
	if argv := m.Argv(); len(argv) > 0 {
		t.printf("  command: %s\n", strings.Join(argv, " "))
	}
}

func (t *textWriter) findings(fs []Finding) int {
	t.section("Findings")
	n := 0
	for _, f := range fs {
		if f.Fails() {
			n++
		}
		t.finding(f)
	}
	if len(fs) == 0 {
		t.printf("  (none)\n")
	}
	t.printf("%d finding(s).\n", n)
	return n
}

func (t *textWriter) finding(f Finding) {
	sev := strings.ToUpper(string(f.Severity))
	tag := ""
	switch {
	case f.Accepted:
		tag = t.paint(ansiGreen, " [accepted: "+f.AcceptedReason+"]")
	case f.Unknown:
		tag = t.paint(ansiYellow, " [unknown]")
	}
	t.printf("  %s %s %s%s%s\n", t.paint(sevColor(f.Severity), fmt.Sprintf("%-8s", sev)), f.Code, f.Subject, atLocation(f.Location), tag)
	t.printf("           %s\n", f.Detail)
	t.printf("           %s %s\n", t.paint(ansiDim, "fix:"), f.Fix)
	if len(f.Also) > 0 {
		t.printf("           %s %s\n", t.paint(ansiDim, "also:"), strings.Join(f.Also, ", "))
	}
}

func sevColor(s Severity) string {
	switch s {
	case Critical, High:
		return ansiRed
	case Medium:
		return ansiYellow
	default:
		// low and informational: below
	}
	return ansiCyan
}

func locString(l Location) string {
	if l.Line > 0 {
		return fmt.Sprintf("%s:%d", l.File, l.Line)
	}
	return l.File
}

func atLocation(l Location) string {
	if l.File == "" {
		return ""
	}
	return " (" + locString(l) + ")"
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func seccompString(s Seccomp) string {
	if s.Profile != "" {
		return s.Mode + " (" + s.Profile + ")"
	}
	return orDefault(s.Mode, "unknown")
}

func limitString(n int64, bytes bool) string {
	switch {
	case n <= 0:
		return "none"
	case bytes:
		return formatBytes(n)
	}
	return fmt.Sprint(n)
}

func cpuString(c float64) string {
	if c <= 0 {
		return "none"
	}
	return fmt.Sprintf("%g", c)
}
