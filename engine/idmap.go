package engine

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// How a root-owned workspace is handed to the agent (Grant.Method).
const (
	// GrantACL: the agent's unprivileged host uid gets POSIX ACL entries
	// for the run, and Revoke takes them back.
	GrantACL = "acl"
	// GrantChown: the workspace owner's inodes are lent to the agent's
	// unprivileged host uid for the run (chown), and Revoke gives them
	// back; under gVisor, whose Sentry evaluates no ACL
	// (runsc_grant_linux.go).
	GrantChown = "chown"
	// GrantIDMap: the workspace is bound through an idmapped mount. Not
	// used (see GrantMethod); named so that records can say so.
	GrantIDMap = "idmap"
)

// GrantMethod says how a root-owned workspace is handed to the agent when
// runtime r runs the sandbox, and why. Under runsc it is GrantChown
// (RunscGrantReason); otherwise it is always GrantACL: where the
// runtime cannot make idmapped mounts that is the only way, and where it
// can, an idmapped workspace would map the agent's uid onto host root, so
// that every file the agent creates is owned by root on the host and the
// agent may set its set-uid bit; that is a root shell left on the host for
// whoever runs it while the run lasts. The reason names what r supports.
func (r Runtime) GrantMethod(ctx context.Context) (method, reason string) {
	if r.Name == "runsc" {
		return GrantChown, RunscGrantReason
	}
	ok, detail := IDMappedMounts(ctx, r)
	if !ok {
		return GrantACL, detail + "; the workspace is granted with ACLs"
	}
	return GrantACL, detail + ", but through one the agent's files would be owned by host root and could be made set-uid root, so the workspace is granted with ACLs to an unprivileged uid"
}

// idmapSince is the first release of each runtime whose idmapped mounts
// take the same mapping as the user namespace: runc 1.2.0 added them
// (the spec's mount uidMappings/gidMappings); crun had an "idmap" mount
// option earlier, with the mapping inverted until 1.8.1.
var idmapSince = map[string][3]int{"runc": {1, 2, 0}, "crun": {1, 8, 1}}

// IDMappedMounts reports whether runtime r can bind a directory through an
// idmapped mount, from its name and `r --version`, and says what it found.
func IDMappedMounts(ctx context.Context, r Runtime) (bool, string) {
	since, known := idmapSince[r.Name]
	if !known {
		return false, fmt.Sprintf("agentbox does not know whether %s supports idmapped mounts", r.Name)
	}
	ver, err := runtimeVersion(ctx, r)
	if err != nil {
		return false, fmt.Sprintf("%s version unknown (%v)", r.Name, err)
	}
	if !atLeast(ver, since) {
		return false, fmt.Sprintf("%s %s has no idmapped mounts (%s >= %d.%d.%d has)", r.Name, ver, r.Name, since[0], since[1], since[2])
	}
	return true, fmt.Sprintf("%s %s supports idmapped mounts", r.Name, ver)
}

// versionRE finds "runc version 1.1.5+ds1" or "crun version 1.8.1".
var versionRE = regexp.MustCompile(`(?m)^\S+ version (\S+)`)

// runtimeVersion is r's version: r.Version when the caller read it
// already, else what `r --version` prints.
func runtimeVersion(ctx context.Context, r Runtime) (string, error) {
	if r.Version != "" {
		return r.Version, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.Path, "--version")
	cmd.Env = runtimeEnv()
	out, err := cmd.Output()
	if err != nil {
		return "", err
	}
	m := versionRE.FindSubmatch(out)
	if m == nil {
		return "", fmt.Errorf("no version in %q", firstLine(string(out)))
	}
	return string(m[1]), nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// atLeast compares a dotted version ("1.1.5+ds1", "1.2.0-rc.1") with min;
// a pre-release counts as the release before.
func atLeast(ver string, min [3]int) bool {
	core, pre, _ := strings.Cut(strings.SplitN(ver, "+", 2)[0], "-")
	parts := strings.Split(core, ".")
	for i := range 3 {
		n := 0
		if i < len(parts) {
			v, err := strconv.Atoi(parts[i])
			if err != nil {
				return false
			}
			n = v
		}
		if n != min[i] {
			return n > min[i]
		}
	}
	return pre == ""
}
