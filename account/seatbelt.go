package account

import (
	"fmt"
	"sort"
	"strings"
)

// SandboxExec is the only sandbox-exec agentbox runs: the system's, never
// one found on PATH.
const SandboxExec = "/usr/bin/sandbox-exec"

// The Seatbelt profile's parameters, passed as -DNAME=PATH. Paths must be
// resolved (/private/tmp, not /tmp): Seatbelt matches the vnode's real
// path.
const (
	ParamHome      = "AGENT_HOME" // the run's fresh home: read-write
	ParamWorkspace = "WORKSPACE"  // the granted workspace: read-write
	ParamTmp       = "TMPDIR"     // the run's temporary directory: read-write
	ParamAgent     = "AGENT_DIR"  // the agent's install directory: read-only
	// ParamStarter is the agentbox binary the account executes first (it
	// runs the self-test, then executes the agent): read-only.
	ParamStarter = "AGENTBOX_STARTER"
)

// SeatbeltParams are the parameter values of one run.
type SeatbeltParams struct {
	Home, Workspace, Tmp, Agent, Starter string
}

// seatbeltSystemRead are the system trees every program needs to load.
var seatbeltSystemRead = []string{
	"/usr", "/bin", "/sbin", "/System", "/Library/Apple", "/private/etc",
	"/private/var/db/timezone", "/private/var/db/dyld", "/Library/Preferences/Logging",
}

// RenderSeatbelt renders the profile for an agent whose only network exit
// is the gateway's loopback port. It denies by default and then allows, in
// order: running and signalling its own processes, reading the system
// trees and the parameters' paths, writing only the home, workspace and
// temporary directory, a terminal, and TCP to localhost:gatewayPort. The
// workspace's protected paths (resolved, absolute) are then denied every
// write, as the Linux engine's read-only binds make them: Seatbelt is
// last-match-wins, so the denies come after the workspace's allow. DNS is
// closed: neither mDNSResponder's socket nor its mach service is reachable,
// since pf cannot see lookups that daemon makes on the account's behalf;
// those closing denies come last. A protected path Seatbelt's string
// syntax could misread (a quote, a backslash, a control character) is an
// error.
func RenderSeatbelt(gatewayPort int, protected []string) (string, error) {
	deny := make([]string, 0, len(protected))
	for _, p := range protected {
		if !strings.HasPrefix(p, "/") || strings.ContainsFunc(p, func(r rune) bool { return r == '"' || r == '\\' || r < 0x20 || r == 0x7f }) {
			return "", fmt.Errorf("protected path %q cannot be written into a Seatbelt profile (want an absolute path without quotes, backslashes or control characters)", p)
		}
		deny = append(deny, fmt.Sprintf("(subpath \"%s\")", p))
	}
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format+"\n", a...) }
	w("(version 1)")
	w(";; agentbox: the agent's Seatbelt profile. Run as:")
	w(";;   %s -f FILE -D%s=… -D%s=… -D%s=… -D%s=… -D%s=… -- COMMAND …", SandboxExec, ParamHome, ParamWorkspace, ParamTmp, ParamAgent, ParamStarter)
	w("(deny default)")
	w("(allow process-exec process-fork)")
	w("(allow signal (target same-sandbox))")
	w("(allow process-info* (target same-sandbox))")
	w("(allow sysctl-read)")
	w("(allow ipc-posix-sem ipc-posix-shm-read-data)")
	w("(allow mach-lookup (global-name \"com.apple.system.opendirectoryd.libinfo\") (global-name \"com.apple.cfprefsd.daemon\") (global-name \"com.apple.logd\"))")
	w("(allow file-read-metadata)")
	w("(allow file-read* %s)", subpaths(seatbeltSystemRead))
	w("(allow file-read* (subpath (param \"%s\")))", ParamAgent)
	w("(allow file-read* (literal (param \"%s\")))", ParamStarter)
	w("(allow file-read* file-write* (subpath (param \"%s\")) (subpath (param \"%s\")) (subpath (param \"%s\")))", ParamHome, ParamWorkspace, ParamTmp)
	w("(allow file-read* file-write* (literal \"/dev/null\") (literal \"/dev/zero\") (literal \"/dev/tty\") (literal \"/dev/ptmx\") (regex #\"^/dev/ttys[0-9]+$\"))")
	w("(allow file-read* (literal \"/dev/random\") (literal \"/dev/urandom\"))")
	w("(allow pseudo-tty)")
	if len(deny) > 0 {
		w(";; The workspace's protected paths: no write, whatever the workspace allows.")
		w("(deny file-write* %s)", strings.Join(deny, " "))
	}
	w("(allow network-outbound (remote ip \"localhost:%d\"))", gatewayPort)
	w(";; DNS closed: mDNSResponder resolves for the account, outside pf's user rules.")
	w("(deny network-outbound (literal \"/private/var/run/mDNSResponder\"))")
	w("(deny mach-lookup (global-name \"com.apple.dnssd.service\") (global-name \"com.apple.mDNSResponder\"))")
	return b.String(), nil
}

func subpaths(ps []string) string {
	q := make([]string, len(ps))
	for i, p := range ps {
		q[i] = fmt.Sprintf("(subpath %q)", p)
	}
	return strings.Join(q, " ")
}

// SeatbeltArgs is the argv prefix that runs a command under the profile
// file with p's paths: sandbox-exec -f FILE -DNAME=PATH … --.
func SeatbeltArgs(file string, p SeatbeltParams) []string {
	m := map[string]string{ParamHome: p.Home, ParamWorkspace: p.Workspace, ParamTmp: p.Tmp, ParamAgent: p.Agent, ParamStarter: p.Starter}
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	args := []string{SandboxExec, "-f", file}
	for _, n := range names {
		args = append(args, "-D"+n+"="+m[n])
	}
	return append(args, "--")
}
