package selftest

import (
	"context"
)

func workspaceProbes() []Probe {
	return []Probe{{
		Name: "workspace-socket-unreachable", Group: GroupNetwork, Expect: Deny, run: probeWorkspaceSocket,
		Summary: "a unix socket a host program listens on in the workspace is not reached",
	}}
}

func probeWorkspaceSocket(e *Env) outcome {
	c := e.Config.Targets.WorkspaceSocket
	if c == nil {
		return outcome{
			target: "workspace socket", decision: Unknown, observed: "no-canary",
			detail: "the launcher gave no workspace socket canary (InitConfig.targets.workspace_socket)",
		}
	}
	addr, done, err := shortSocketPath(c.Addr)
	if err != nil {
		d, o := decideSyscall(err)
		if d == Allow {
			d = Unknown
		}
		return outcome{target: c.Addr, decision: d, observed: o, detail: "open the socket's directory: " + err.Error()}
	}
	defer done()
	d, o := dialCanary(context.Background(), "unix", addr, c.TokenSHA256, e.Config.timeout())
	return outcome{target: c.Addr, decision: d, observed: o, detail: "connect " + c.Addr + ": " + o}
}
