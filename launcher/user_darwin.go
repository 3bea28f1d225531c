package launcher

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"

	"github.com/agentbox/agentbox/account"
	"github.com/agentbox/agentbox/engine"
	"github.com/agentbox/agentbox/engine/userengine"
	"github.com/agentbox/agentbox/netpolicy/bridge"
	"github.com/agentbox/agentbox/policy"
	"github.com/agentbox/agentbox/selftest"
)

// On darwin the only isolation is the dedicated account _agentbox
// (docs/dedicated-user.md): a run without --isolation chooses it, and says
// so. The engine is userengine.MacEngine; its first process is the
// starter (userstarter.go), agentbox itself as the account under the
// Seatbelt profile, which speaks agentbox-init's protocol, so that the
// self-test, its verdict and the hand-over are the Linux launcher's own
// steps (configureInit, verify, handOver). What init does as root on
// Linux is done here, by the launcher: the gateway's loopback relay.
// Cross-compiled and vetted only: none of it has run on a Mac.

// userRun is what an --isolation user run holds beyond a sandbox's: the
// account, its lock, the fence's listeners, the gateway's loopback relay
// and the engine.
type userRun struct {
	acct  account.Account
	lock  *os.File
	fence []selftest.NetCanary
	relay *bridge.Bridge
	mac   *userengine.MacEngine
}

// release closes the relay and gives the account's lock back; nil-safe.
func (u *userRun) release() {
	if u == nil {
		return
	}
	if u.relay != nil {
		_ = u.relay.Close()
		u.relay = nil
	}
	if u.lock != nil {
		u.lock.Close()
		u.lock = nil
	}
}

// rootRunRoot is root's run root: macOS has no /run, and / is read-only.
const rootRunRoot = "/private/var/run/agentbox"

// findInit is the starter: this binary (the copy the account can reach is
// made by locateInit and install).
func findInit(func(string) string) (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(self)
}

// becomeSubreaper has nothing to do on darwin, which has no subreaper:
// the starter is this process's own child, and teardown kills whatever of
// the account is left wherever it is.
func (p *prepared) becomeSubreaper() error {
	if p.run.Target != policy.TargetUser {
		return engine.BecomeSubreaper() // refuses, naming --isolation user
	}
	return nil
}

// chooseUser makes user isolation the run's on darwin, saying so when the
// policy did not ask for it, and reads the account's facts.
func (pl *planned) chooseUser() error {
	pl.host.OS = policy.OSDarwin // the plan's layers are darwin's (policy/userdarwin.go)
	var note string
	if pl.policy, note = darwinIsolation(pl.policy); note != "" {
		pl.run.Target = policy.TargetOf(pl.policy)
		if !pl.l.cfg.JSON {
			fmt.Fprintln(pl.l.out, note)
		}
	}
	a, err := account.LookupDarwin(context.Background(), account.DarwinName)
	if errors.Is(err, account.ErrNoAccount) {
		return nil // Resolve refuses with the fix (agentbox setup-user)
	}
	if err != nil {
		return err
	}
	pl.host.Account = &policy.UserAccount{Name: a.Name, UID: uint32(a.UID), GID: uint32(a.GID), Home: a.Home}
	pl.run.GatewayPort = policy.GatewayPort
	if !pl.dry {
		pl.run.GatewayPort, err = freeLoopbackPort()
	}
	return err
}

// userSteps are the Prepare stage for TargetUser on darwin: no OCI
// runtime, no id map, no mount, no init of root's; the starter is started
// as the account behind the pf fence, under the Seatbelt profile.
func (p *prepared) userSteps(ctx context.Context) []namedStep {
	if p.dry {
		return []namedStep{{name: "render", run: func() error {
			return &policy.InputError{Field: "--isolation", Msg: "agentbox spec renders an OCI runtime's spec, and --isolation user runs none", Fix: "agentbox setup-user --dry-run --os darwin prints the account's plan; agentbox run records the engine's commands in the run's bundle (mac.json)"}
		}}}
	}
	p.user = &userRun{}
	return []namedStep{
		{name: "gc", run: p.collectStale},
		{name: "run directory", run: p.createRunDir},
		{name: "account", run: p.checkDarwinAccount},
		{name: "ids", run: p.hostIDMap},
		{name: "render", run: p.renderMac},
		{name: "gateway", run: p.startGateway},
		{name: "gateway relay", run: p.startRelay},
		{name: "init binary", run: func() error { return p.initBin.install() }},
		{name: "home", run: p.makeUserHome},
		{name: "bundle", run: p.writeMacBundle},
		{name: "workspace grant", run: func() error { return p.user.mac.Grant(ctx) }},
		{name: "canaries", run: p.plantCanaries},
		{name: "fence canary", run: p.plantFenceCanary},
		{name: "init channel", run: p.openInit},
		{name: "create", run: func() error { return p.create(ctx) }},
		{name: "configure init", run: p.configureInit},
	}
}

// checkDarwinAccount takes the account for the run (one run at a time:
// the fences of two would block each other's gateway), refuses when it
// could read the invoker's home or root's, and when it could not reach
// the workspace: every directory above it must be searchable by the
// account, and a workspace in a home kept closed to it is not.
func (p *prepared) checkDarwinAccount() error {
	a, err := account.LookupDarwin(context.Background(), account.DarwinName)
	if err != nil {
		return err
	}
	if a.UID <= 0 || a.GID <= 0 {
		return &refusal{fmt.Sprintf("the account %s has uid %d and gid %d; it must be an account of its own (agentbox setup-user)", a.Name, a.UID, a.GID)}
	}
	p.user.acct = a
	if p.user.lock, err = lockAccount(filepath.Join(p.dirs.RunRoot, "user-account.lock")); err != nil {
		return err
	}
	if err := refuseReach(a, []string{p.host.Home, "/var/root"}, "chmod -N"); err != nil {
		return err
	}
	parent := filepath.Dir(p.plan.Workspace)
	if acc := account.Reach(account.Host, a, parent, account.Exec); acc.Allowed != account.Yes {
		return &refusal{fmt.Sprintf("the account %s cannot reach the workspace %s: %s (%s); the grant covers the workspace only, and a home must stay closed to the account: move the workspace out of it (for example under /Users/Shared)", a.Name, p.plan.Workspace, acc.Allowed, acc.Why)}
	}
	return nil
}

// renderMac fills the engine's record from the plan and writes the spec
// of what runs: the starter, as the account, with the agent's environment,
// in the workspace.
func (p *prepared) renderMac() error {
	a, id := p.user.acct, p.plan.Identity
	ws, err := filepath.EvalSymlinks(p.plan.Workspace) // Seatbelt matches real paths
	if err != nil {
		return err
	}
	var st unix.Stat_t
	if err := unix.Lstat(ws, &st); err != nil {
		return fmt.Errorf("workspace %s: %w", ws, err)
	}
	r := userengine.MacRun{
		Account: a.Name, UID: a.UID, GID: a.GID, Port: p.plan.GatewayLoopbackPort(),
		Workspace: ws, Owner: int(st.Uid), OwnerGID: int(st.Gid),
		Home: id.Home, Tmp: filepath.Join(id.Home, "tmp"), AgentDir: id.Home,
		Starter: p.plan.Init, Profile: p.runDir.File("agent.sb"), Anchor: p.runDir.File("pf.anchor"),
	}
	for _, g := range a.Groups {
		r.Groups = append(r.Groups, g.GID)
	}
	for _, m := range p.plan.Mounts {
		switch m.Kind {
		case policy.KindInstall:
			if r.AgentDir == id.Home && m.Source != "" {
				r.AgentDir = m.Source
			}
		case policy.KindProtected:
			if rel, err := filepath.Rel(p.plan.Workspace, m.Destination); err == nil && !strings.HasPrefix(rel, "..") {
				r.Protected = append(r.Protected, filepath.Join(ws, rel))
			}
		default:
			// A socket cover: the profile allows no connect but the
			// gateway's TCP port, so a socket in the workspace is closed
			// already. The other kinds are an OCI runtime's mounts.
		}
	}
	if r.Tmp, err = planTmp(p.plan.Env, r.Tmp); err != nil {
		return err
	}
	p.user.mac = &userengine.MacEngine{Run: r}
	if _, err := r.ProfileText(); err != nil {
		return err
	}
	p.spec = &specs.Spec{
		Version: specs.Version, Root: &specs.Root{Path: "/"},
		Process: &specs.Process{Args: r.StarterArgv(), Env: p.plan.Env, Cwd: ws},
	}
	return nil
}

// planTmp is the plan's TMPDIR when it has one below the run's home.
func planTmp(env []string, def string) (string, error) {
	tmp := envValue(env, "TMPDIR")
	if tmp == "" {
		return def, nil
	}
	if filepath.Dir(tmp) != filepath.Dir(def) {
		return "", fmt.Errorf("the plan's TMPDIR %s is not in the run's home", tmp)
	}
	return tmp, nil
}

// startRelay relays 127.0.0.1:PORT and [::1]:PORT to the gateway's socket
// for the run: agentbox-init's bridge on Linux, the launcher's own here
// (root, outside the account's fence and profile).
func (p *prepared) startRelay() error {
	b, err := bridge.Listen(bridge.Config{Port: p.plan.GatewayLoopbackPort(), Socket: p.plan.GatewaySocket, Addrs: []string{"127.0.0.1", "::1"}})
	if err != nil {
		return fmt.Errorf("gateway relay: %w", err)
	}
	p.user.relay = b
	go func() { _ = b.Serve(context.Background()) }()
	return nil
}

// writeMacBundle records the engine's parts (fence, grant, home) in the
// bundle before any of them exists, so that a gc after a crash finds them.
func (p *prepared) writeMacBundle() error {
	p.eng, p.meta.Runtime = p.user.mac, engine.Runtime{Name: string(policy.TargetUser)}
	if err := p.runDir.WriteMeta(p.meta); err != nil {
		return err
	}
	return p.user.mac.WriteBundle(p.runDir.Bundle(), p.spec, p.plan.Rootfs)
}

// bridgeSocket is the gateway's socket on the host.
func (p *prepared) bridgeSocket() string { return p.plan.GatewaySocket }

// userInit adds what the starter needs: the fence's listeners, the
// probes of darwin's catalog the plan runs (its residuals take out the
// ones xnu cannot answer and name their stand-ins: planProbes), and no
// bridge (the launcher serves the relay) and no seccomp filter or
// protected binds (Linux's; the profile denies writes to those paths).
func (p *prepared) userInit(ic *selftest.InitConfig) {
	if p.user == nil {
		return
	}
	ic.Targets.Fence = p.user.fence
	ic.Probes = planProbes(p.plan, selftest.Catalog())
	ic.Bridge = nil
}

// verifyHost checks the starter, the agent-to-be, from the host: the
// kernel's process table (sysctl kern.proc.pid) gives its real, effective
// and saved ids. macOS has no procfs, no namespaces and no uid_map, so
// Linux's host checks have nothing to read here. (init names no
// agent-to-be here: the session's process is the starter.)
func (p *prepared) verifyHost(int) []selftest.Result {
	if p.user == nil || p.sess == nil {
		return nil
	}
	pid := p.sess.Pid()
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	var ids procIDs
	if err == nil {
		pc, uc := kp.Eproc.Pcred, kp.Eproc.Ucred
		ids = procIDs{
			UIDs:   []int{int(pc.P_ruid), int(uc.Uid), int(pc.P_svuid)},
			GIDs:   []int{int(pc.P_rgid), int(pc.P_svgid)},
			Groups: ucredGroups(uc),
		}
		if kp.Proc.P_pid != int32(pid) {
			err = fmt.Errorf("kern.proc.pid %d answered pid %d", pid, kp.Proc.P_pid)
		}
	}
	return []selftest.Result{hostAccountIDs(pid, ids, err, p.user.acct, p.run.ID)}
}

// ucredGroups are the effective credential's groups; the first is the
// effective gid.
func ucredGroups(uc unix.Ucred) []int {
	n := min(int(uc.Ngroups), len(uc.Groups))
	out := make([]int, 0, n)
	for _, g := range uc.Groups[:max(n, 0)] {
		out = append(out, int(g))
	}
	return out
}
