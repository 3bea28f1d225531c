package launcher

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/agentbox/agentbox/ledger"
	"github.com/agentbox/agentbox/policy"
	"github.com/agentbox/agentbox/workspace"
)

// workspaceSnapshot is the launcher's inspection of the workspace at
// launch (docs/workspace.md): its sockets (which the plan covers), the
// host-executed files and the protected paths (which teardown compares),
// and where the inspection stopped short.
type workspaceSnapshot struct {
	root    string
	protect []string
	launch  *workspace.Snapshot
	capped  []string
}

// workspaceAfter is the inspection at teardown: what the agent left that
// host tools execute, and where this inspection stopped short too.
type workspaceAfter struct {
	left   []workspace.Leftover
	capped []string
}

// inspectWorkspace snapshots the workspace before planning; it only reads.
func (pl *planned) inspectWorkspace() error {
	ws, err := policy.ResolveWorkspace(pl.policy, pl.host)
	if err != nil {
		return nil // planning reports it, in the same words
	}
	protect := pl.policy.ProtectPaths()
	snap, err := workspace.Inspect(ws, protect, workspace.DefaultLimits)
	if err != nil {
		return err
	}
	if snap.SocketsCapped {
		return refusef("the workspace %s holds more than %d unix sockets, each of which would need a mount; remove the stale ones (find %s -type s) and run again", ws, workspace.DefaultLimits.MaxSockets, ws)
	}
	pl.ws = workspaceSnapshot{root: ws, protect: protect, launch: snap, capped: snap.Capped}
	pl.host.WorkspaceSockets = snap.Sockets
	pl.sayWorkspace()
	return nil
}

// sayWorkspace names, before anything runs, the host sockets found in the
// workspace and where the inspection stopped short.
func (pl *planned) sayWorkspace() {
	if pl.l.cfg.JSON || pl.dry {
		return
	}
	if s := pl.ws.launch.Sockets; len(s) > 0 {
		fmt.Fprintf(pl.l.out, "agentbox: unix sockets in the workspace, covered inside (a program listening there is not reachable): %s\n", quoteList(s))
	}
	for _, c := range pl.ws.capped {
		fmt.Fprintf(pl.l.out, "agentbox: workspace inspection: %s\n", strconv.QuoteToASCII(c))
	}
}

// inspectLeftovers snapshots the workspace again after teardown and
// names what the agent left that host tools execute on their own.
func (l *launch) inspectLeftovers(ws workspaceSnapshot) workspaceAfter {
	var after workspaceAfter
	if ws.launch == nil {
		return after
	}
	now, err := workspace.Inspect(ws.root, ws.protect, workspace.DefaultLimits)
	if err != nil {
		fmt.Fprintf(l.out, "agentbox: warning: inspecting the workspace after the run: %v\n", err)
		return workspaceAfter{capped: []string{"teardown: " + err.Error()}}
	}
	after = workspaceAfter{left: workspace.Changes(ws.launch, now), capped: now.Capped}
	if l.cfg.JSON || len(after.left) == 0 {
		return after
	}
	fmt.Fprintf(l.out, "agentbox: the agent left %d file(s) in the workspace that host tools run on their own; review them before you run git, direnv or your editor there:\n", len(after.left))
	for _, f := range after.left {
		fmt.Fprintf(l.out, "agentbox:   %s\n", describeLeftover(f))
	}
	return after
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

// workspaceRecord is the inspection for the run's record, and the residual
// of an inspection that stopped short; nil when there was none.
func workspaceRecord(ws workspaceSnapshot, after workspaceAfter) (*ledger.Workspace, []ledger.Residual) {
	if ws.launch == nil {
		return nil, nil
	}
	w := &ledger.Workspace{Sockets: ws.launch.Sockets, Capped: append(append([]string(nil), ws.capped...), after.capped...)}
	for _, f := range after.left {
		w.Leftovers = append(w.Leftovers, ledger.Leftover{Path: f.Path, Kind: string(f.Kind), Change: f.Change, Key: f.Key, Value: f.Value, Detail: f.Detail})
	}
	if len(w.Capped) == 0 {
		return w, nil
	}
	return w, []ledger.Residual{{Code: "workspace-inspection-capped", Detail: "the workspace inspection stopped short (" + strings.Join(w.Capped, "; ") + "): sockets there were not covered and files there not compared"}}
}

func quoteList(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.QuoteToASCII(s)
	}
	return strings.Join(q, ", ")
}
