package launcher

import (
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/agentbox/agentbox/ledger"
	"github.com/agentbox/agentbox/policy"
	"github.com/agentbox/agentbox/selftest"
	"github.com/agentbox/agentbox/workspace"
)

// workspaceState is the launcher's inspection of the workspace
// (docs/workspace.md): its snapshot at launch, the one at teardown and
// what changed between them.
type workspaceState struct {
	root    string
	protect []string
	launch  *workspace.Snapshot
	// canary is the workspace socket canary's path relative to root.
	canary string
	left   []workspace.Leftover
	capped []string
}

// inspectWorkspace plants the workspace socket canary, then snapshots
// the workspace before planning: its sockets (which the plan covers), the
// host-executed files and the protected paths (which teardown compares).
func (l *launch) inspectWorkspace() error {
	ws, err := policy.ResolveWorkspace(l.policy, l.host)
	if err != nil {
		return nil // planning reports it, in the same words
	}
	l.ws.root, l.ws.protect = ws, l.policy.ProtectPaths()
	if l.runDir != nil {
		if err := l.plantWorkspaceSocket(ws); err != nil {
			return err
		}
	}
	snap, err := workspace.Inspect(ws, l.ws.protect, workspace.DefaultLimits)
	if err != nil {
		return err
	}
	if snap.SocketsCapped {
		return refusef("the workspace %s holds more than %d unix sockets, each of which would need a mount; remove the stale ones (find %s -type s) and run again", ws, workspace.DefaultLimits.MaxSockets, ws)
	}
	l.ws.launch, l.ws.capped = snap, snap.Capped
	l.host.WorkspaceSockets, l.host.LandlockABI = snap.Sockets, selftest.LandlockABI()
	l.sayWorkspace()
	return nil
}

// sayWorkspace names, before anything runs, the host sockets found in the
// workspace and where the inspection stopped short.
func (l *launch) sayWorkspace() {
	if l.cfg.JSON {
		return
	}
	if s := l.hostSockets(); len(s) > 0 {
		fmt.Fprintf(l.out, "agentbox: unix sockets in the workspace, covered inside (a program listening there is not reachable): %s\n", quoteList(s))
	}
	for _, c := range l.ws.capped {
		fmt.Fprintf(l.out, "agentbox: workspace inspection: %s\n", strconv.QuoteToASCII(c))
	}
}

// hostSockets are the sockets found at launch, the canary left out.
func (l *launch) hostSockets() []string {
	var out []string
	if l.ws.launch == nil {
		return nil
	}
	for _, s := range l.ws.launch.Sockets {
		if s != l.ws.canary {
			out = append(out, s)
		}
	}
	return out
}

// plantWorkspaceSocket listens on a socket in the workspace as a host
// program would, for workspace-socket-unreachable. It binds through an fd
// of the workspace (so that no path is re-resolved and a long workspace
// path fits a sockaddr), and makes the socket connectable by anyone, so
// that only the sandbox's own layers can refuse the probe. gc removes it
// after a crash (meta.json names it).
func (l *launch) plantWorkspaceSocket(ws string) error {
	dir, err := unix.Open(ws, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("workspace socket canary: %w", err)
	}
	defer unix.Close(dir)
	name := ".agentbox-canary-" + l.runID + ".sock"
	ln, err := net.Listen("unix", "/proc/self/fd/"+strconv.Itoa(dir)+"/"+name)
	if err != nil {
		return fmt.Errorf("workspace socket canary: %w", err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false) // removed by path below, with the other canaries
	path := filepath.Join(ws, name)
	c := &l.st.canaries
	c.workspace = c.serve(ln, path)
	c.files = append(c.files, path)
	l.meta.Canaries = c.files
	if err := l.runDir.WriteMeta(l.meta); err != nil {
		return err
	}
	l.ws.canary = name
	return chmodSocket(dir, name)
}

// chmodSocket makes the socket name below dir connectable by every uid,
// through an O_PATH fd checked to be that socket: never a symlink the
// name might have been swapped for.
func chmodSocket(dir int, name string) error {
	fd, err := unix.Openat(dir, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("workspace socket canary: %w", err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFSOCK {
		return errors.Join(errors.New("workspace socket canary: replaced before it was made connectable"), err)
	}
	return unix.Chmod("/proc/self/fd/"+strconv.Itoa(fd), 0o666)
}

// inspectLeftovers snapshots the workspace again after teardown and
// names what the agent left that host tools execute on their own.
func (l *launch) inspectLeftovers() {
	if l.ws.launch == nil {
		return
	}
	now, err := workspace.Inspect(l.ws.root, l.ws.protect, workspace.DefaultLimits)
	if err != nil {
		l.ws.capped = append(l.ws.capped, "teardown: "+err.Error())
		fmt.Fprintf(l.out, "agentbox: warning: inspecting the workspace after the run: %v\n", err)
		return
	}
	l.ws.capped = append(l.ws.capped, now.Capped...)
	l.ws.left = workspace.Changes(l.ws.launch, now)
	if l.cfg.JSON || len(l.ws.left) == 0 {
		return
	}
	fmt.Fprintf(l.out, "agentbox: the agent left %d file(s) in the workspace that host tools run on their own; review them before you run git, direnv or your editor there:\n", len(l.ws.left))
	for _, f := range l.ws.left {
		fmt.Fprintf(l.out, "agentbox:   %s\n", describeLeftover(f))
	}
}

func describeLeftover(f workspace.Leftover) string {
	s := fmt.Sprintf("%s %s (%s)", strconv.QuoteToASCII(f.Path), f.Change, f.Kind)
	if f.Key != "" {
		s += fmt.Sprintf(": %s = %s", f.Key, strconv.QuoteToASCII(f.Value))
	}
	if f.Detail != "" {
		q := strconv.QuoteToASCII(f.Detail) // agent text (a symlink target) may be in it
		s += ": " + q[1:len(q)-1]
	}
	return s
}

// recordWorkspace puts the inspection in the run's record; an inspection
// that stopped short is a residual too.
func (l *launch) recordWorkspace() {
	if l.ws.launch == nil {
		return
	}
	w := &ledger.Workspace{Sockets: l.hostSockets(), Capped: l.ws.capped}
	for _, f := range l.ws.left {
		w.Leftovers = append(w.Leftovers, ledger.Leftover{Path: f.Path, Kind: string(f.Kind), Change: f.Change, Key: f.Key, Value: f.Value, Detail: f.Detail})
	}
	l.rec.Workspace = w
	if len(w.Capped) > 0 {
		l.rec.Residuals = append(l.rec.Residuals, ledger.Residual{Code: "workspace-inspection-capped", Detail: "the workspace inspection stopped short (" + strings.Join(w.Capped, "; ") + "): sockets there were not covered and files there not compared"})
	}
}

func quoteList(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.QuoteToASCII(s)
	}
	return strings.Join(q, ", ")
}
