package policy

import (
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
)

// TargetUser is the target where agentbox runs the agent on this host as a dedicated account
// (agentbox-agent, made by agentbox setup-user), with no OCI runtime and no
// namespaces. The agent sees the host's root, pids and network; what keeps
// it in is the account's own uid (file permissions, the workspace granted
// to it by an ACL for the run), the Landlock ruleset and seccomp filter
// agentbox-init applies before it drops to the account, a cgroup of the
// run's own, and an nftables fence keyed on the account's uid that lets it
// reach only the gateway's loopback port (Run.GatewayPort).
const TargetUser Target = "user"

// IsolationUser is Policy.Isolation's value that plans for TargetUser.
const IsolationUser = "user"

// IDHost is the id mode where the agent runs as a host account (TargetUser); nothing is mapped.
const IDHost IDMode = "host"

// UserAccount is the dedicated account a TargetUser plan runs the agent
// as: the host facts of its passwd entry.
type UserAccount struct {
	Name     string
	UID, GID uint32
	// Home is the account's home directory; each run gets a fresh home
	// below it (UserRunHome).
	Home string
}

// TargetOf is the target a policy's isolation asks for.
func TargetOf(p Policy) Target {
	if p.Isolation == IsolationUser {
		return TargetUser
	}
	return TargetRuntime
}

func validateIsolation(p Policy, src Source) error {
	switch p.Isolation {
	case "", IsolationUser:
		return nil
	}
	return src.errorf("isolation", `use "user" (the dedicated account, docs/dedicated-user.md), or leave it out for the default sandbox of namespaces`, "unknown isolation %q", p.Isolation)
}

// UserRunHome is the fresh home of run id below the account's home: the
// launcher makes it, owned by the account, and removes it at teardown.
func UserRunHome(accountHome, id string) string {
	return filepath.Join(accountHome, "runs", id)
}

// user reports whether the plan is for TargetUser.
func (r *resolver) user() bool { return r.run.Target == TargetUser }

// userIdentity is the account's identity: its own host ids (nothing is
// mapped), a fresh home of the run's, the workspace granted to it by an
// ACL, and an init split from it (host root, holding only InitCaps before
// it starts anything; see InitIdentity).
func (r *resolver) userIdentity() error {
	a := r.h.Account
	if a == nil {
		return &HostError{What: "--isolation user needs the account agentbox-agent, which does not exist", Fix: "create it with: agentbox setup-user"}
	}
	if a.UID == 0 || a.GID == 0 || a.UID == r.h.EUID {
		return &RefusedError{What: fmt.Sprintf("account %s has uid %d gid %d: the agent would run as root or as you", a.Name, a.UID, a.GID), Fix: "recreate it with: agentbox setup-user --remove && agentbox setup-user"}
	}
	if r.h.EUID != 0 {
		return &HostError{What: "--isolation user runs as root: it grants the workspace, loads the network fence and switches to the account", Fix: "run it with sudo"}
	}
	r.plan.Identity = Identity{
		UID: a.UID, GID: a.GID, User: a.Name, Home: UserRunHome(a.Home, r.run.ID),
		GrantWorkspace: true, IDMap: IDMap{Mode: IDHost},
		Init: InitIdentity{Split: true, Caps: append([]string(nil), InitCaps...)},
	}
	return nil
}

// ResidualUserShared is the residual of every TargetUser plan: no
// namespace separates the agent from the host, and the probes that look
// for one (UserSharedProbes) report ALLOW.
const ResidualUserShared = "user-shared-namespaces"

// UserSharedProbes are the probes that report ALLOW where the agent shares
// the host's namespaces: they look at what a namespace would hide.
var UserSharedProbes = []string{
	"host-pids-invisible", "only-loopback", "no-default-route", "metadata-unreachable",
	"uid-map-non-identity", "device-nodes-minimal", "kernel-cmdline-hidden",
	"container-socket-absent", "host-home-not-mounted", "proc-keys-unreadable",
	// The probes run as the account without the agent's Landlock domain,
	// which alone scopes abstract and workspace unix sockets here.
	"host-abstract-socket-unreachable", "workspace-socket-unreachable",
	// The host's own checks of the agent.
	"host-uid-map", "host-namespaces", "host-mounts",
}

// userResiduals are what a TargetUser plan gives up, each with its
// reason.
func (r *resolver) userResiduals() {
	if r.darwin() {
		r.darwinPlan() // userdarwin.go
	} else {
		r.linuxUserResiduals()
	}
	if !r.plan.Terminal {
		r.plan.Residuals = append(r.plan.Residuals, Residual{
			Code:   "user-no-terminal",
			Reason: "stdin and stdout are not both a terminal, so --isolation user gives the agent pipes, not a pty of its own",
		})
	}
}

// linuxUserResiduals are what a TargetUser plan on Linux gives up.
func (r *resolver) linuxUserResiduals() {
	r.plan.Residuals = append(r.plan.Residuals, Residual{
		Code: ResidualUserShared,
		Reason: "--isolation user has no namespaces: the agent sees the host's processes, mounts, devices and network interfaces, and the host's routes; " +
			"file permissions, Landlock, seccomp and the nftables fence on its uid stand in for them (the probes named here look for a namespace and say ALLOW); " +
			"the probes run as the account under its seccomp filter but outside the agent's Landlock domain, so unix sockets the host listens on (abstract, or in the workspace) are reached by them, and by the agent where the kernel's Landlock ABI is below 6 (abstract) or 9 (pathname)",
		Probes: append([]string(nil), UserSharedProbes...),
	})
}

// userLandlock is the account's Landlock ruleset: the host's system
// directories and /etc read-only, /proc and /sys read-only, /dev, the
// workspace and the run's home read-write, the command's closure and the
// policy's binds as the policy says; TCP to the gateway's port only unless
// the policy allows local TCP. macOS has no Landlock: its plan has none,
// and the Seatbelt profile is the engine's (userdarwin.go).
func (r *resolver) userLandlock() {
	p := r.plan
	if r.darwin() {
		p.Landlock = nil
		return
	}
	paths := []LandlockPath{
		{Path: "/etc"},
		{Path: "/proc"},
		{Path: "/sys", Optional: true},
		{Path: "/dev", Write: true, IoctlDev: true},
		{Path: p.Identity.Home, Write: true},
	}
	for _, d := range HostSystemDirs {
		paths = append(paths, LandlockPath{Path: d, Optional: true})
	}
	for _, m := range p.Mounts {
		if m.Kind == KindProtected || m.Kind == KindCover {
			continue // inside the workspace, read-only by their binds
		}
		paths = append(paths, LandlockPath{Path: m.Destination, Write: !m.ReadOnly})
	}
	ll := &Landlock{Paths: dedupLandlock(paths)}
	if p.GatewayPort != 0 && !p.Network.LocalTCP {
		ll.RestrictTCP, ll.ConnectTCP = true, []uint16{uint16(p.GatewayPort)}
	}
	p.Landlock = ll
}

// dedupLandlock sorts paths and keeps one entry per path: the widest
// (write over read, required over optional).
func dedupLandlock(paths []LandlockPath) []LandlockPath {
	by := map[string]LandlockPath{}
	for _, p := range paths {
		if q, ok := by[p.Path]; ok {
			p.Write, p.IoctlDev, p.Optional = p.Write || q.Write, p.IoctlDev || q.IoctlDev, p.Optional && q.Optional
		}
		by[p.Path] = p
	}
	out := make([]LandlockPath, 0, len(by))
	for _, p := range by {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// GatewayLoopbackPort is the loopback port the agent reaches the gateway
// on: the run's own for TargetUser, GatewayPort inside a sandbox.
func (p *Plan) GatewayLoopbackPort() int {
	if p.GatewayPort != 0 {
		return p.GatewayPort
	}
	return GatewayPort
}

// gatewayURL is where the agent adapter points the agent.
func (r *resolver) gatewayURL() string {
	return "http://127.0.0.1:" + strconv.Itoa(r.plan.GatewayLoopbackPort())
}
