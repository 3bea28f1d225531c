package policy

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"

	"github.com/agentbox/agentbox/seccomp/profiles"
)

// HostError says that this host cannot provide something the plan needs,
// and how to fix that. The CLI maps it to exit code 4.
type HostError struct {
	What string
	Fix  string
}

func (e *HostError) Error() string {
	if e.Fix == "" {
		return e.What
	}
	return e.What + "; " + e.Fix
}

// RefusedError refuses a plan that would break the boundary whatever the
// user asked for (id maps that reach host root, from a subordinate id range
// that includes 0), and says how to fix the host. The CLI maps it to exit
// code 3, a refused boundary.
type RefusedError struct {
	What string
	Fix  string
}

func (e *RefusedError) Error() string {
	if e.Fix == "" {
		return e.What
	}
	return e.What + "; " + e.Fix
}

// Agent identity inside the sandbox when the workspace owner is root.
const (
	AgentUID  = 1000
	AgentGID  = 1000
	AgentUser = "agent"
	AgentHome = "/home/agent"
	// Hostname is the sandbox's host name, the one source: the plan's
	// and spec.Default's.
	Hostname = "agentbox"
)

// Resolve turns a policy and a command into a Plan for host h and launch
// run: every decision of the sandbox, the agent adapter's changes to the
// command and environment included, so that nothing edits the plan
// afterwards. It reads the host only through h and changes nothing: the
// same inputs give the same plan, and nothing that run names needs to
// exist yet.
func Resolve(p Policy, argv []string, h Host, run Run) (*Plan, error) {
	if len(argv) == 0 {
		return nil, &InputError{Field: "command", Msg: "no command to run", Fix: "give one after --, for example: agentbox run -- sh"}
	}
	if err := checkRun(run); err != nil {
		return nil, err
	}
	run.Target = run.Target.orDefault()
	plan := &Plan{Hostname: Hostname, Terminal: h.Terminal && (run.Target == TargetRuntime || run.Target == TargetUser), Accepted: p.Accept, Target: run.Target}
	r := &resolver{p: p, h: h, run: run, bundle: run.Bundle, plan: plan}
	steps := []struct {
		name string
		run  func() error
	}{
		{"workspace", r.resolveWorkspace},
		{"runtime", r.resolveRuntime},
		{"rootfs", r.resolveRootfs},
		{"command", func() error { return r.resolveCommand(argv) }},
		{"binds", r.resolveBinds},
		{"identity", r.resolveIdentity},
		{"environment", r.resolveEnv},
		{"limits", r.resolveLimits},
		{"cgroup", r.resolveCgroup},
		{"seccomp", r.resolveSeccomp},
		{"lsm", r.resolveLSM},
		{"init", r.resolveInit},
		{"gateway", r.resolveGateway},
		{"protected paths", r.resolveProtected},
		{"workspace sockets", r.coverSockets},
		{"mounts", r.finishMounts},
		{"landlock", r.resolveLandlock},
		{"agent", r.resolveAgent},
	}
	for _, s := range steps {
		if run.Target == TargetUser && userSkips[s.name] {
			continue
		}
		if err := s.run(); err != nil {
			return nil, fmt.Errorf("%s: %w", s.name, err)
		}
	}
	return r.plan, nil
}

// userSkips are the steps that a TargetUser plan has no use for: the agent
// sees the host's root (userResiduals says what that gives up). Its
// protected paths and socket covers are planned as for a sandbox and bound
// by agentbox-init in a mount namespace of the agent's own.
var userSkips = map[string]bool{"rootfs": true}

// resolver is one Resolve call: its inputs, and the plan its steps fill in
// order.
type resolver struct {
	p      Policy
	h      Host
	run    Run
	bundle string
	plan   *Plan
	// bins are install directories to put in front of PATH inside.
	bins []string
	// venvs are the directories the command's closure looked at for a
	// Python venv (closure.go).
	venvs map[string]bool
}

func (r *resolver) abs(path string) string {
	if filepath.IsAbs(path) {
		return filepath.Clean(path)
	}
	return filepath.Join(r.h.Cwd, path)
}

func (r *resolver) resolveWorkspace() error {
	ws := r.p.Workspace
	if ws == "" {
		ws = r.h.Cwd
	}
	real, err := r.h.FS.EvalSymlinks(r.abs(ws))
	if err != nil {
		return r.unusable("workspace", ws, err, "create it or pass --workspace DIR")
	}
	fi, err := r.h.FS.Stat(real)
	if err != nil || !fi.Mode.IsDir() {
		return &InputError{Field: "workspace", Msg: fmt.Sprintf("%s is not a directory", real), Fix: "pass --workspace DIR with a project directory"}
	}
	// The workspace is classified as the audit classifies it, declared: a
	// directory inside a home or below /tmp is fine, the home itself, one
	// holding homes, a system directory or /tmp itself is not.
	if err := r.refuse("workspace", ws, real, r.classify(real, BindFacts{Workspaces: []string{real}})); err != nil {
		return err
	}
	r.plan.Workspace, r.plan.Cwd = real, real
	r.plan.Mounts = append(r.plan.Mounts, Mount{Kind: KindWorkspace, Source: real, Destination: real})
	return nil
}

// ResolveWorkspace returns the workspace directory that p names on h,
// resolved and checked as Resolve does it (the launcher inspects it
// before planning), or Resolve's error.
func ResolveWorkspace(p Policy, h Host) (string, error) {
	r := &resolver{p: p, h: h, plan: &Plan{}}
	if err := r.resolveWorkspace(); err != nil {
		return "", err
	}
	return r.plan.Workspace, nil
}

// classify is ClassifyBind with this host's facts: its home directories,
// and whether real is a unix socket.
func (r *resolver) classify(real string, f BindFacts) PathClass {
	f.Homes = r.h.Homes
	if fi, err := r.h.FS.Stat(real); err == nil && fi.Mode.Type() == fs.ModeSocket {
		f.Socket = true
	}
	return ClassifyBind(real, f)
}

// refuse rejects a path of a class that may never be bound, unless the
// policy accepts the matching finding code for it with a reason. The host
// root is refused even then.
func (r *resolver) refuse(field, given, real string, c PathClass) error {
	if c.Code == "" || (c.Code != CodeHostRoot && r.accepts(c.Code, real)) {
		return nil
	}
	msg := c.Describe(real)
	if given != real {
		msg = fmt.Sprintf("%s resolves to %s, which %s", given, real, c.What)
	}
	fix := PathFixes[c.Code]
	if field == "workspace" {
		fix = "use a project directory as the workspace (--workspace DIR)"
	}
	if c.Code != CodeHostRoot {
		fix += "; or " + AcceptHint(c.Code, real)
	}
	return &PathRefusal{Code: c.Code, Path: real, Err: &InputError{Field: field, Msg: msg, Fix: fix}}
}

// PathRefusal is the planner's refusal of a path of a class ClassifyBind
// names: bad input (Err, exit code 2) with the finding code, which the
// audit would report for the same path.
type PathRefusal struct {
	Code string // the finding code, CodeSocket…CodeSystem
	Path string // the resolved path
	Err  *InputError
}

func (e *PathRefusal) Error() string { return e.Err.Error() }
func (e *PathRefusal) Unwrap() error { return e.Err }

// AcceptHint is the one text that says how to tolerate a refused finding:
// on the command line, which accepts every finding of the code, or in a
// policy file, where subject narrows the acceptance to that path and what
// lies below it ("" names none). Both need a written reason, which the run
// records.
func AcceptHint(code, subject string) string {
	yaml := fmt.Sprintf("{code: %s, reason: \"…\"}", code)
	if subject != "" {
		yaml = fmt.Sprintf("{code: %s, subject: %q, reason: \"…\"}", code, subject)
	}
	return fmt.Sprintf("accept it with --accept %s=REASON, or in %s with: accept: [%s]", code, FileName, yaml)
}

func (r *resolver) accepts(code, subject string) bool {
	_, ok := Accepting(r.p.Accept, code, subject)
	return ok
}

func (r *resolver) resolveRuntime() error {
	name, chosen, reason := r.p.Runtime, ChosenPolicy, "asked for by the policy (--runtime, or runtime: in a policy file)"
	if r.engine() {
		if name == "" {
			name = "runc" // the engine's host is not this one: no fact of it to choose by
		}
		r.plan.Runtime = Runtime{Name: filepath.Base(name)}
		return nil
	}
	if r.user() {
		return nil // no OCI runtime: agentbox-init is started directly
	}
	if name == "" {
		chosen = ChosenDefault
		name, reason = ChooseRuntime(r.h, r.plan.Workspace)
	}
	if filepath.Base(name) == "crun" && crunCannotEnter(r.h, r.plan.Workspace) {
		return &HostError{What: "crun cannot run this sandbox: " + crunWorkspaceWhy(r.plan.Workspace), Fix: "use --runtime runc, or let others search the workspace (chmod o+x " + r.plan.Workspace + ")"}
	}
	if filepath.Base(name) == "crun" && r.h.HybridCgroup && r.h.EUID != 0 {
		return &HostError{What: "crun cannot run rootless on this host: it refuses the hybrid cgroup layout's v2 hierarchy, which holds controllers, and only root can hide it from crun", Fix: "use --runtime runc, or run agentbox as root"}
	}
	path, err := r.h.FS.LookPath(name)
	if err != nil {
		return &HostError{What: fmt.Sprintf("OCI runtime %s not found", name), Fix: runtimeFix(name)}
	}
	real, err := r.h.FS.EvalSymlinks(path)
	if err != nil {
		return &HostError{What: fmt.Sprintf("OCI runtime %s: %v", path, err), Fix: runtimeFix(name)}
	}
	if err := r.trustedBinary("runtime", real); err != nil {
		return err
	}
	r.plan.Runtime = Runtime{Name: filepath.Base(name), Path: path, Chosen: chosen, Reason: reason}
	return nil
}

// trustedBinary refuses a program that root would execute although someone
// other than root or the invoking user could have written it: a file in the
// workspace (the agent's side), or one whose file or any directory above it
// is owned by another user or writable by group or others.
func (r *resolver) trustedBinary(field, real string) error {
	if ws := r.plan.Workspace; ws != "" && within(real, ws) {
		return &InputError{Field: field, Msg: fmt.Sprintf("%s is inside the workspace, which the agent can write", real), Fix: "use a runtime installed outside the workspace, for example: apt-get install runc"}
	}
	for p := real; ; p = filepath.Dir(p) {
		fi, err := r.h.FS.Lstat(p)
		if err != nil {
			return &HostError{What: fmt.Sprintf("check %s: %v", p, err), Fix: "check the path given as runtime"}
		}
		if fi.UID != 0 && fi.UID != r.h.EUID {
			return &InputError{Field: field, Msg: fmt.Sprintf("%s is owned by uid %d, neither root nor you, so it could run their code as you", p, fi.UID), Fix: "use a runtime installed by root, for example: apt-get install runc"}
		}
		if fi.Mode.Perm()&0o022 != 0 && fi.Mode&fs.ModeSymlink == 0 {
			return &InputError{Field: field, Msg: fmt.Sprintf("%s is writable by group or others (mode %04o), so another user could replace %s", p, fi.Mode.Perm(), real), Fix: "use a runtime in a directory only root can write, for example: apt-get install runc"}
		}
		if p == "/" {
			return nil
		}
	}
}

func runtimeFix(name string) string {
	switch name {
	case "runc", "crun":
		return "install it with: apt-get install " + name
	case "runsc":
		return "install gVisor's runsc (see https://gvisor.dev/docs/user_guide/install/)"
	}
	return "check the path given as runtime"
}

func (r *resolver) resolveBinds() error {
	lists := []struct {
		field string
		paths []string
		ro    bool
	}{{"binds.read_only", r.p.Binds.ReadOnly, true}, {"binds.read_write", r.p.Binds.ReadWrite, false}}
	for _, l := range lists {
		for i, b := range l.paths {
			field := fmt.Sprintf("%s[%d]", l.field, i)
			real, err := r.realPath(field, b, r.abs(b))
			var in *InputError
			switch {
			case errors.As(err, &in):
				return err
			case err != nil:
				return r.unusable(field, b, err, "create it or remove the bind")
			}
			c := r.classify(real, BindFacts{ReadOnly: l.ro, Workspaces: []string{r.plan.Workspace}})
			if err := r.refuse(field, b, real, c); err != nil {
				return err
			}
			r.plan.Mounts = append(r.plan.Mounts, Mount{Kind: KindExtra, Source: real, Destination: real, ReadOnly: l.ro})
		}
	}
	return nil
}

// InitPath is where agentbox-init appears inside the sandbox.
const InitPath = "/.agentbox/init"

// resolveInit binds agentbox-init read-only as the sandbox's first process;
// a container engine starts the command with an init of its own.
func (r *resolver) resolveInit() error {
	if r.h.InitPath == "" || r.engine() {
		return nil
	}
	if r.user() {
		r.plan.Init = r.h.InitPath // on the host, as it is: nothing is bound
		return nil
	}
	r.plan.Init = InitPath
	r.plan.Mounts = append(r.plan.Mounts, Mount{Kind: KindRuntime, Source: r.h.InitPath, Destination: InitPath, ReadOnly: true})
	return nil
}

// GatewaySocket is where the gateway's socket appears inside the sandbox;
// agentbox-init relays the sandbox's 127.0.0.1 gateway port to it.
const GatewaySocket = "/run/agentbox/gateway.sock"

// resolveGateway places the run's gateway socket in its run directory and
// binds it (the sandbox's one exit); the launcher starts the gateway there
// after planning. A read-only bind of a socket still accepts connections.
// A compose project's gateway is a service of its own.
func (r *resolver) resolveGateway() error {
	r.plan.Network, r.plan.Gateway = r.p.Network, r.p.Gateway
	if r.run.GatewayToken == "" || r.engine() {
		return nil
	}
	r.plan.GatewaySocket = filepath.Join(r.run.Dir, GatewaySocketDir, GatewaySocketName)
	if r.user() {
		r.plan.GatewayPort = r.run.GatewayPort // init relays it to the socket
		return nil
	}
	if r.gvisor() {
		return nil // its Sentry reaches no host socket: init's bridge gets each connection from the launcher
	}
	// noexec: a socket runs nothing, and a run root on a noexec file
	// system (a systemd host's /run) locks that flag on the bind, which
	// runc's read-only remount must then repeat (else EPERM in the user
	// namespace).
	r.plan.Mounts = append(r.plan.Mounts, Mount{Kind: KindRuntime, Source: r.plan.GatewaySocket, Destination: GatewaySocket, ReadOnly: true, Options: []string{"noexec"}})
	return nil
}

// gvisor reports whether gVisor's runsc runs the sandbox: its Sentry, not
// the host kernel, serves the agent's system calls, and with runsc's
// default --host-uds=none it connects to no host unix socket.
func (r *resolver) gvisor() bool { return r.plan.Runtime.Name == "runsc" }

// engine reports whether a container engine or a cluster's kubelet, not
// agentbox, runs the sandbox.
func (r *resolver) engine() bool { return r.run.Target == TargetEngine || r.kubernetes() }

// finishMounts orders mounts so that a parent is mounted before its
// children and rejects two mounts on one destination.
func (r *resolver) finishMounts() error {
	ms := r.plan.Mounts
	sort.SliceStable(ms, func(i, j int) bool { return ms[i].Destination < ms[j].Destination })
	for i := 1; i < len(ms); i++ {
		if ms[i].Destination == ms[i-1].Destination {
			return &InputError{Field: "binds", Msg: fmt.Sprintf("%s is mounted twice (%s and %s)", ms[i].Destination, ms[i-1].Kind, ms[i].Kind), Fix: "remove the duplicate bind"}
		}
	}
	return nil
}

// CgroupParent is the cgroup, in every hierarchy, below which a root
// launcher's sandboxes get a cgroup each, named by the run's id.
const CgroupParent = "agentbox"

// resolveCgroup places a root launcher's sandbox in a cgroup of the run's
// own below /CgroupParent; rootless, or for a plan of no run, agentbox
// places none.
func (r *resolver) resolveCgroup() error {
	if !r.plan.Identity.Rootless && r.run.ID != "" {
		r.plan.CgroupsPath = "/" + CgroupParent + "/" + r.run.ID
	}
	return nil
}

// resolveSeccomp chooses the seccomp profile: agentbox's allowlist, the
// only one there is.
func (r *resolver) resolveSeccomp() error {
	r.plan.Seccomp = profiles.Default().Name
	return nil
}
