//go:build linux

package launcher

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/agentbox/agentbox/account"
	"github.com/agentbox/agentbox/engine"
	"github.com/agentbox/agentbox/engine/userengine"
	"github.com/agentbox/agentbox/policy"
	"github.com/agentbox/agentbox/seccomp"
	"github.com/agentbox/agentbox/seccomp/profiles"
	"github.com/agentbox/agentbox/selftest"
)

// userRun is what an --isolation user run (policy.TargetUser) holds
// beyond a sandbox's: the account's lock, its facts, and the compiled
// seccomp filter init's children load.
type userRun struct {
	acct   account.Account
	lock   *os.File
	filter []byte
	// fence are the listeners outside the gateway's port (selftest.Targets.Fence).
	fence []selftest.NetCanary
}

// release gives the account's lock back; nil-safe.
func (u *userRun) release() {
	if u != nil && u.lock != nil {
		u.lock.Close()
		u.lock = nil
	}
}

// chooseUser, for TargetUser, reads the account's facts and chooses the
// gateway's loopback port, before planning.
func (pl *planned) chooseUser() error {
	if pl.run.Target != policy.TargetUser {
		return nil
	}
	a, err := account.Lookup(account.LinuxName, account.Paths{})
	if err != nil {
		if errors.Is(err, account.ErrNoAccount) {
			return nil // Resolve refuses with the fix
		}
		return err
	}
	pl.host.Account = &policy.UserAccount{Name: a.Name, UID: uint32(a.UID), GID: uint32(a.GID), Home: a.Home}
	if pl.dry {
		pl.run.GatewayPort = policy.GatewayPort
		return nil
	}
	pl.run.GatewayPort, err = freeLoopbackPort()
	return err
}

// userSteps are the Prepare stage after the plan for TargetUser: no OCI
// runtime, no id map, no mount; init is started on the host as root in the
// run's cgroup, behind the account's fence.
func (p *prepared) userSteps(ctx context.Context) []namedStep {
	if p.dry {
		return []namedStep{{name: "render", run: func() error {
			return &policy.InputError{Field: "--isolation", Msg: "agentbox spec renders an OCI runtime's spec, and --isolation user runs none", Fix: "agentbox run --isolation user records its plan in the run's record (agentbox show)"}
		}}}
	}
	p.user = &userRun{}
	return []namedStep{
		{name: "gc", run: p.collectStale},
		{name: "run directory", run: p.createRunDir},
		{name: "account", run: p.checkAccount},
		{name: "ids", run: p.hostIDMap},
		{name: "render", run: p.renderUser},
		{name: "gateway", run: p.startGateway},
		{name: "init binary", run: func() error { return p.initBin.install() }},
		{name: "home", run: p.makeUserHome},
		{name: "bundle", run: p.writeUserBundle},
		{name: "workspace grant", run: p.grantWorkspace},
		{name: "canaries", run: p.plantCanaries},
		{name: "fence canary", run: p.plantFenceCanary},
		{name: "init channel", run: p.openInit},
		{name: "create", run: func() error { return p.create(ctx) }},
		{name: "configure init", run: p.configureInit},
	}
}

// checkAccount takes the account for the run (one run at a time: the
// fences of two would drop each other's gateway) and refuses when it could
// read the invoker's home or root's.
func (p *prepared) checkAccount() error {
	a, err := account.Lookup(account.LinuxName, account.Paths{})
	if err != nil {
		return err
	}
	p.user.acct = a
	if p.user.lock, err = lockAccount(filepath.Join(p.dirs.RunRoot, "user-account.lock")); err != nil {
		return err
	}
	return refuseReach(a, []string{p.host.Home, "/root"}, "setfacl -b")
}

// becomeSubreaper makes the launcher the subreaper of the sandbox's
// processes, which outlive init otherwise unseen.
func (p *prepared) becomeSubreaper() error { return engine.BecomeSubreaper() }

// verifyHost is the host's verification through procfs of the sandbox
// whose agent-to-be init names inside.
func (p *prepared) verifyHost(inside int) []selftest.Result {
	return selftest.VerifyHost(p.eng.ProcRoot(), p.sandboxPIDsOf(inside), p.hostState())
}

// hostState is what VerifyHost compares the sandbox with: the launcher's
// own namespaces and mounts, and the plan's intended binds.
func (p *prepared) hostState() selftest.HostState {
	hs, err := selftest.ReadHostState(p.eng.ProcRoot())
	if err != nil {
		hs = selftest.HostState{} // VerifyHost then reports UNKNOWN
	}
	hs.Homes, hs.RunID = p.host.Homes, p.run.ID
	// The runtime's own mounts: the bundle's root, the default device nodes
	// it binds from the host in a user namespace, and /dev/null over each
	// masked /proc file.
	hs.AllowSources = append(hs.AllowSources, filepath.Join(p.runDir.Bundle(), p.spec.Root.Path))
	hs.AllowSources = append(hs.AllowSources, runtimeDevices...)
	for _, m := range p.plan.Mounts {
		// Every bind of the plan is intended; the read-only system binds too.
		// VerifyHost still refuses homes, sockets and the host root among them.
		if m.Source != "" {
			hs.AllowSources = append(hs.AllowSources, m.Source)
		}
	}
	return hs
}

// runtimeDevices are the device nodes an OCI runtime binds into a sandbox
// with a user namespace (it cannot create them there).
var runtimeDevices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"}

// findInit is agentbox-init (FindInit).
func findInit(getenv func(string) string) (string, error) { return FindInit(getenv) }

// rootRunRoot is root's run root.
const rootRunRoot = "/run/agentbox"

// renderUser compiles the plan's seccomp profile for init's children and
// writes the record of what runs: init, with the agent's environment, in
// the run's cgroup.
func (p *prepared) renderUser() error {
	prof, ok := profiles.Named(p.plan.Seccomp)
	if !ok {
		return fmt.Errorf("the plan names seccomp profile %q, which agentbox does not have", p.plan.Seccomp)
	}
	oci, err := prof.NativeOCI()
	if err != nil {
		return err
	}
	prog, err := seccomp.Compile(oci) // pure Go: no libseccomp, any build
	if err != nil {
		return fmt.Errorf("compile the seccomp filter: %w", err)
	}
	p.user.filter = prog.BPF
	p.spec = &specs.Spec{
		Version: specs.Version, Root: &specs.Root{Path: "/"},
		Process: &specs.Process{Args: []string{p.plan.Init}, Env: p.plan.Env, Cwd: "/"},
		Linux:   &specs.Linux{CgroupsPath: p.plan.CgroupsPath},
	}
	p.meta.Cgroup = p.plan.CgroupsPath
	return nil
}

// writeUserBundle records the engine's parts (fence, cgroup, home) in the
// bundle before any of them exists, so that a gc after a crash finds them.
func (p *prepared) writeUserBundle() error {
	e := &userengine.Engine{Record: userengine.Record{
		Fence:  userengine.Fence{Table: userengine.TableName(p.run.ID), UID: p.plan.Identity.UID, Port: p.plan.GatewayPort},
		Cgroup: p.plan.CgroupsPath, Limits: p.plan.Limits, Home: p.plan.Identity.Home,
	}}
	p.eng, p.meta.Runtime = e, engine.Runtime{Name: string(policy.TargetUser)}
	if err := p.runDir.WriteMeta(p.meta); err != nil {
		return err
	}
	if err := e.WriteBundle(p.runDir.Bundle(), p.spec, p.plan.Rootfs); err != nil {
		return err
	}
	if slices.ContainsFunc(p.plan.Mounts, func(m policy.Mount) bool { return m.Kind == policy.KindCover }) {
		// The empty file agentbox-init binds over each workspace socket.
		if err := os.WriteFile(filepath.Join(p.runDir.Bundle(), policy.CoverFile), nil, 0o444); err != nil {
			return fmt.Errorf("socket cover: %w", err)
		}
	}
	return nil
}

// bridgeSocket is where init finds the gateway's socket: on the host for
// TargetUser, bound into the sandbox otherwise.
func (p *prepared) bridgeSocket() string {
	if p.plan.Target == policy.TargetUser {
		return p.plan.GatewaySocket
	}
	return policy.GatewaySocket
}

// userInit adds what init needs for TargetUser: the seccomp filter its
// child loads, the fence's listeners, and the read-only binds of the
// workspace's protected paths and socket covers, which the child makes
// before the probes it runs (in `agentbox selftest` too: they stand where
// an agent would).
func (p *prepared) userInit(ic *selftest.InitConfig) {
	if p.user == nil {
		return
	}
	ic.Agent.Seccomp = p.user.filter
	ic.Targets.Fence = p.user.fence
	ic.Agent.Protect = userProtect(p.plan)
}

// userProtect is the plan's protected and cover mounts as the binds
// agentbox-init makes (selftest.Protect); nil when there are none.
func userProtect(plan *policy.Plan) *selftest.Protect {
	var binds []selftest.ProtectBind
	for _, m := range plan.Mounts {
		if m.Kind != policy.KindProtected && m.Kind != policy.KindCover {
			continue
		}
		rel, err := filepath.Rel(plan.Workspace, m.Destination)
		if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, "../") || filepath.IsAbs(rel) {
			continue // the plan makes these below the workspace only
		}
		b := selftest.ProtectBind{Path: filepath.ToSlash(rel)}
		if m.Source != m.Destination {
			b.Source = m.Source
		}
		binds = append(binds, b)
	}
	if len(binds) == 0 {
		return nil
	}
	return &selftest.Protect{Workspace: plan.Workspace, Binds: binds}
}
