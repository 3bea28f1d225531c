//go:build linux

package launcher

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"

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
		return []namedStep{{"render", func() error {
			return &policy.InputError{Field: "--isolation", Msg: "agentbox spec renders an OCI runtime's spec, and --isolation user runs none", Fix: "agentbox run --isolation user records its plan in the run's record (agentbox show)"}
		}}}
	}
	p.user = &userRun{}
	return []namedStep{
		{"gc", p.collectStale},
		{"run directory", p.createRunDir},
		{"account", p.checkAccount},
		{"ids", p.hostIDMap},
		{"render", p.renderUser},
		{"gateway", p.startGateway},
		{"init binary", func() error { return p.initBin.install() }},
		{"home", p.makeUserHome},
		{"bundle", p.writeUserBundle},
		{"workspace grant", p.grantWorkspace},
		{"canaries", p.plantCanaries},
		{"fence canary", p.plantFenceCanary},
		{"init channel", p.openInit},
		{"create", func() error { return p.create(ctx) }},
		{"configure init", p.configureInit},
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
	for _, home := range []string{p.host.Home, "/root"} {
		acc := account.Reach(account.Host, a, home, account.Read)
		switch acc.Allowed {
		case account.Yes:
			return &refusal{fmt.Sprintf("the account %s can read %s (%s), so the agent would read it too; fix: chmod 0700 %s (and setfacl -b %s for an ACL), then check with: agentbox audit --user %s", a.Name, home, acc.Why, home, home, a.Name)}
		case account.Unknown:
			return &refusal{fmt.Sprintf("whether the account %s can read %s is unknown (%s); fix what stops the check, then: agentbox audit --user %s", a.Name, home, acc.Why, a.Name)}
		}
	}
	return nil
}

// lockAccount holds path's lock for the run, or says which run holds it.
func lockAccount(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		return nil, &refusal{fmt.Sprintf("another --isolation user run holds the account (%s): its fence would drop this run's gateway port; wait for it to end, or run 'agentbox gc' if its launcher died", path)}
	}
	return f, nil
}

// hostIDMap is the identity map of the account's ids: the workspace grant
// reads the host ids from it.
func (p *prepared) hostIDMap() error {
	id := p.plan.Identity
	p.ids.uids = []specs.LinuxIDMapping{{ContainerID: id.UID, HostID: id.UID, Size: 1}}
	p.ids.gids = []specs.LinuxIDMapping{{ContainerID: id.GID, HostID: id.GID, Size: 1}}
	return nil
}

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

// makeUserHome makes the run's fresh home, the account's.
func (p *prepared) makeUserHome() error {
	id := p.plan.Identity
	return userengine.MakeHome(id.Home, id.UID, id.GID)
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

// plantFenceCanary adds a listener on ::1 to the one on 127.0.0.1: the
// fence probe aims at both, outside the gateway's port.
func (p *prepared) plantFenceCanary() error {
	l, err := net.Listen("tcp6", "[::1]:0")
	if err != nil {
		return fmt.Errorf("host loopback canary on ::1: %w", err)
	}
	p.user.fence = append(p.user.fence, *p.canaries.loopback, *p.canaries.serve(l, l.Addr().String()))
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
// children load, the fence's listeners, and the read-only binds of the
// workspace's protected paths and socket covers.
func (p *prepared) userInit(ic *selftest.InitConfig) {
	if p.user == nil {
		return
	}
	ic.Agent.Seccomp = p.user.filter
	ic.Targets.Fence = p.user.fence
	if len(ic.Agent.Args) > 0 {
		ic.Agent.Protect = userProtect(p.plan)
	}
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
