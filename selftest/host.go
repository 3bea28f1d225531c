package selftest

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/agentbox/agentbox/policy/homesecrets"
)

// HostState is what VerifyHost compares the sandbox with: the host's own
// namespaces and mounts, and what the plan binds on purpose.
type HostState struct {
	// Namespaces are the host's namespace inodes by name ("net", "user", …).
	Namespaces map[string]uint64
	// Mounts is the host's mountinfo, used to name the host path behind each
	// of the sandbox's mounts.
	Mounts []Mount
	// Homes are host home directories; /home and /root always count.
	Homes []string
	// AllowSources are host paths the plan binds on purpose (workspace,
	// agentbox-init, the agent's install dir); they are exempt from the
	// system-directory check, not from the home, socket and root checks.
	AllowSources []string
	// RunID is copied into the results.
	RunID string
}

// ReadHostState reads the namespaces and mounts of the calling process.
func ReadHostState(procRoot string) (HostState, error) {
	ns, err := ReadNamespaces(procRoot, "self")
	if err != nil {
		return HostState{}, err
	}
	b, err := os.ReadFile(filepath.Join(procRoot, "self", "mountinfo"))
	if err != nil {
		return HostState{}, err
	}
	m, err := ParseMountinfo(b)
	if err != nil {
		return HostState{}, err
	}
	return HostState{Namespaces: ns, Mounts: m}, nil
}

// namespaceKinds are the namespaces a sandbox must not share with the host.
var namespaceKinds = []string{"user", "mnt", "pid", "net", "ipc", "uts", "cgroup"}

// ReadNamespaces reads the inode of each namespace link of procRoot/pid/ns
// ("net:[4026531840]"); pid may be "self".
func ReadNamespaces(procRoot, pid string) (map[string]uint64, error) {
	out := map[string]uint64{}
	for _, k := range namespaceKinds {
		link, err := os.Readlink(filepath.Join(procRoot, pid, "ns", k))
		if err != nil {
			return nil, fmt.Errorf("namespace %s of %s: %w", k, pid, err)
		}
		inner, ok := strings.CutPrefix(link, k+":[")
		ino, err := strconv.ParseUint(strings.TrimSuffix(inner, "]"), 10, 64)
		if !ok || err != nil {
			return nil, fmt.Errorf("namespace %s of %s: malformed link %q", k, pid, link)
		}
		out[k] = ino
	}
	return out, nil
}

// IdentifyHostPath names p by filesystem and path inside it, from the
// mountinfo of procRoot/self, so that probes can find it wherever a mount
// shows it. p is resolved through symlinks first.
func IdentifyHostPath(procRoot, p string) (HostPath, error) {
	hps, errs := IdentifyHostPaths(procRoot, p)
	return hps[0], errs[0]
}

// IdentifyHostPaths names each of ps as IdentifyHostPath does, from one
// read of the mount table: errs[i] is why ps[i] could not be named, nil
// when hps[i] names it.
func IdentifyHostPaths(procRoot string, ps ...string) (hps []HostPath, errs []error) {
	hps, errs = make([]HostPath, len(ps)), make([]error, len(ps))
	var mounts []Mount
	var mountsErr error
	read := false
	for i, p := range ps {
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			errs[i] = fmt.Errorf("identify %s: %w", p, err)
			continue
		}
		real, _ = filepath.Abs(real)
		if !read {
			mounts, mountsErr = readMounts(procRoot)
			read = true
		}
		if mountsErr != nil {
			errs[i] = fmt.Errorf("identify %s: %w", p, mountsErr)
			continue
		}
		m, ok := mountOf(mounts, real)
		if !ok {
			errs[i] = fmt.Errorf("identify %s: no mount holds it", p)
			continue
		}
		hps[i] = HostPath{Path: real, Dev: m.Dev, FSPath: path.Join(m.Root, strings.TrimPrefix(real, m.MountPoint))}
		if ino, err := inode(real); err == nil {
			hps[i].Ino = ino
		}
	}
	return hps, errs
}

// SandboxPIDs are the host pids of the sandbox that VerifyHost reads.
type SandboxPIDs struct {
	// Init is agentbox-init, the sandbox's first process.
	Init int
	// Agent is init's child that becomes the agent: it already runs under
	// the agent's ids, with the agent's capabilities (none), and waits for
	// the launcher's go (Launcher.AgentPID, found with HostPID).
	Agent int
	// Sentry says that Init is gVisor's Sentry, in which init and the agent
	// run as tasks of its own kernel: the host checks read the Sentry
	// (Agent is then Init) and judge its capabilities as the Sentry's
	// (gvisor.go).
	Sentry bool
}

// VerifyHost checks the sandbox from the host, reading procRoot/<pid>: the
// agent's uid_map, capability sets, NoNewPrivs and Seccomp, that its
// namespaces differ from host.Namespaces, that no mount of it shows the host
// root, a home, an engine socket or a system directory, and that init's uids
// are not the agent's. Each check is one Result, named "host-…", expecting
// DENY; a pid it cannot read makes its checks UNKNOWN.
func VerifyHost(procRoot string, p SandboxPIDs, host HostState) []Result {
	if p.Sentry {
		p.Agent = p.Init
	}
	agent := filepath.Join(procRoot, strconv.Itoa(p.Agent))
	caps := func() outcome { return hostStatus(agent, decideCapabilities) }
	if p.Sentry {
		caps = func() outcome { return sentryCapabilities(sentryDir(procRoot, p.Init)) }
	}
	checks := []struct {
		name string
		run  func() outcome
	}{
		{"host-uid-map", func() outcome { return hostIDMap(agent) }},
		{"host-capabilities", caps},
		{"host-no-new-privs", func() outcome { return hostStatus(agent, decideNoNewPrivs) }},
		{"host-seccomp", func() outcome { return hostStatus(agent, decideSeccomp) }},
		{"host-namespaces", func() outcome { return hostNamespaces(procRoot, p.Agent, host, p.Sentry) }},
		{"host-mounts", func() outcome { return hostMounts(agent, host) }},
		{"host-init-uid-separate", func() outcome { return hostInitUID(procRoot, p) }},
	}
	out := make([]Result, 0, len(checks))
	for _, c := range checks {
		o := c.run()
		r := Result{
			Probe: c.name, Target: o.target, Expect: Deny, Decision: o.decision,
			Observed: o.observed, RunID: host.RunID, Detail: o.detail,
		}
		r.Evidence = r.Digest()
		out = append(out, r)
	}
	return out
}

// hostInitUID compares the Uid lines (real, effective, saved, filesystem)
// of init and the agent: no id in common is DENY. An agent that shares any
// of init's uids may signal it, and prlimit or ptrace it where the rest
// match too.
func hostInitUID(procRoot string, p SandboxPIDs) outcome {
	target := "pid " + strconv.Itoa(p.Init) + " and " + strconv.Itoa(p.Agent)
	initIDs, err := statusUIDs(procRoot, p.Init)
	if err != nil {
		return outcome{target: target, decision: Unknown, observed: "status-unreadable", detail: err.Error()}
	}
	agentIDs, err := statusUIDs(procRoot, p.Agent)
	if err != nil {
		return outcome{target: target, decision: Unknown, observed: "status-unreadable", detail: err.Error()}
	}
	d, o := decideInitUID(initIDs, agentIDs)
	return outcome{target: target, decision: d, observed: o, detail: fmt.Sprintf("init uids %v, agent uids %v: %s", initIDs, agentIDs, o)}
}

// decideInitUID: disjoint uid sets are DENY, a shared uid ALLOW.
func decideInitUID(initIDs, agentIDs []string) (Decision, string) {
	for _, a := range agentIDs {
		if slices.Contains(initIDs, a) {
			return Allow, "shared:" + a
		}
	}
	return Deny, "separate"
}

// statusUIDs returns the four ids of the Uid line of procRoot/pid/status.
func statusUIDs(procRoot string, pid int) ([]string, error) {
	p := filepath.Join(procRoot, strconv.Itoa(pid), "status")
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	ids := strings.Fields(ParseStatus(b)["Uid"])
	if len(ids) != 4 {
		return nil, fmt.Errorf("%s: malformed Uid line %q", p, ParseStatus(b)["Uid"])
	}
	return ids, nil
}

// HostPID finds, under procRoot, the child of host process parent whose pid
// in its own (innermost) PID namespace is nsPID: how the launcher names
// init's child that will become the agent, which init reports by its pid
// inside the sandbox.
func HostPID(procRoot string, parent, nsPID int) (int, error) {
	entries, err := os.ReadDir(procRoot)
	if err != nil {
		return 0, err
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(procRoot, e.Name(), "status"))
		if err != nil {
			continue
		}
		st := ParseStatus(b)
		ns := strings.Fields(st["NSpid"])
		if st["PPid"] == strconv.Itoa(parent) && len(ns) > 0 && ns[len(ns)-1] == strconv.Itoa(nsPID) {
			return pid, nil
		}
	}
	return 0, fmt.Errorf("no child of pid %d is pid %d in its PID namespace", parent, nsPID)
}

func hostStatus(dir string, decide func(map[string]string) (Decision, string)) outcome {
	b, err := os.ReadFile(filepath.Join(dir, "status"))
	if err != nil {
		return outcome{target: filepath.Join(dir, "status"), decision: Unknown, observed: "status-unreadable", detail: err.Error()}
	}
	d, o := decide(ParseStatus(b))
	return outcome{target: filepath.Join(dir, "status"), decision: d, observed: o, detail: "status: " + o}
}

func hostIDMap(dir string) outcome {
	p := filepath.Join(dir, "uid_map")
	b, err := os.ReadFile(p)
	if err != nil {
		return outcome{target: p, decision: Unknown, observed: "uid-map-unreadable", detail: err.Error()}
	}
	m, err := ParseIDMap(b)
	if err != nil {
		return outcome{target: p, decision: Unknown, observed: "uid-map-malformed", detail: err.Error()}
	}
	d, o := decideIDMap(m)
	return outcome{target: p, decision: d, observed: o, detail: fmt.Sprintf("uid_map %v: %s", m, o)}
}

func hostNamespaces(procRoot string, pid int, host HostState, sentry bool) outcome {
	ns, err := ReadNamespaces(procRoot, strconv.Itoa(pid))
	if err != nil {
		return outcome{target: "namespaces", decision: Unknown, observed: "ns-unreadable", detail: err.Error()}
	}
	if sentry && host.Namespaces != nil && ns["cgroup"] == host.Namespaces["cgroup"] {
		// runsc keeps the Sentry in the host's cgroup namespace, and the
		// plan says so (residual gvisor-sentry-cgroup-namespace): the
		// agent's cgroupfs is the Sentry's. The others must differ.
		d, o, detail := decideNamespaces(ns, withoutCgroup(host.Namespaces, ns["cgroup"]))
		return outcome{target: "namespaces of gVisor's Sentry", decision: d, observed: o + "+sentry-host-cgroup", detail: detail + "; the cgroup namespace is the host's (gVisor's Sentry, a residual of the plan)"}
	}
	d, o, detail := decideNamespaces(ns, host.Namespaces)
	return outcome{target: "namespaces", decision: d, observed: o, detail: detail}
}

// decideNamespaces: any namespace shared with the host is ALLOW; a missing
// host inode is UNKNOWN.
func decideNamespaces(sandbox, host map[string]uint64) (Decision, string, string) {
	var shared []string
	for _, k := range namespaceKinds {
		h, ok := host[k]
		if !ok {
			return Unknown, "host-ns-unknown", "the host's " + k + " namespace was not given"
		}
		if sandbox[k] == h {
			shared = append(shared, k)
		}
	}
	if len(shared) > 0 {
		return Allow, "shared:" + strings.Join(shared, ","), "namespaces shared with the host: " + strings.Join(shared, ",")
	}
	return Deny, "separate", "all of " + strings.Join(namespaceKinds, ",") + " differ from the host's"
}

func hostMounts(dir string, host HostState) outcome {
	b, err := os.ReadFile(filepath.Join(dir, "mountinfo"))
	if err != nil {
		return outcome{target: "mountinfo", decision: Unknown, observed: "mountinfo-unreadable", detail: err.Error()}
	}
	mounts, err := ParseMountinfo(b)
	if err != nil {
		return outcome{target: "mountinfo", decision: Unknown, observed: "mountinfo-malformed", detail: err.Error()}
	}
	var w worst
	for _, m := range mounts {
		src, ok := hostSource(host.Mounts, m)
		if !ok || m.FSType == "cgroup" || m.FSType == "cgroup2" {
			continue
		}
		if kind := classifySource(src, m, host); kind != "" {
			w.add(Allow, kind, fmt.Sprintf("%s shows host %s (%s)", m.MountPoint, src, kind))
		}
	}
	w.otherwise("clean", fmt.Sprintf("%d mounts; none shows the host root, a home, an engine socket or a system directory", len(mounts)))
	return w.outcome("mountinfo")
}

// hostSource names the host path a sandbox mount shows, through a host
// mount of the same filesystem whose root holds the sandbox mount's root.
func hostSource(hostMounts []Mount, m Mount) (string, bool) {
	best, found := Mount{}, false
	for _, h := range hostMounts {
		if h.Dev == m.Dev && within(m.Root, h.Root) && (!found || len(h.Root) > len(best.Root)) {
			best, found = h, true
		}
	}
	if !found {
		return "", false
	}
	rel := strings.TrimPrefix(path.Clean(m.Root), path.Clean(best.Root))
	return path.Join(best.MountPoint, rel), true
}

// homeSecrets are the entries of a home that hold credentials: the
// planner's list (policy.HomeSecrets), from the leaf that owns it.
var homeSecrets = homesecrets.Rels()

// homeRel returns src relative to the home it lies in: below h, or below
// /home/USER when h is /home. The result starts with the home's entry
// (".ssh/id_ed25519").
func homeRel(src, h string) (string, bool) {
	if !within(src, h) || src == h {
		return "", false
	}
	rel := strings.TrimPrefix(strings.TrimPrefix(src, path.Clean(h)), "/")
	if path.Clean(h) == "/home" {
		_, rel, _ = strings.Cut(rel, "/")
	}
	return rel, rel != ""
}

// systemDirs may never be a mount source; readOnlyDirs only read-only.
var (
	systemDirs   = []string{"/boot", "/proc", "/sys", "/dev", "/run", "/var/run", "/var/log", "/var/lib/docker", "/var/lib/containerd", "/var/lib/kubelet"}
	readOnlyDirs = []string{"/etc", "/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/opt", "/var"}
)

// classifySource names the fault of showing host path src in mount m, or "".
func classifySource(src string, m Mount, host HostState) string {
	homes := append([]string{"/home", "/root"}, host.Homes...)
	switch {
	case src == "/":
		return "host-root"
	case path.Dir(src) == "/home":
		return "home"
	case socketMount(Mount{MountPoint: src, Root: src}):
		return "engine-socket"
	}
	for _, h := range homes {
		if within(h, src) {
			return "home"
		}
		if rel, ok := homeRel(src, h); ok && slices.ContainsFunc(homeSecrets, func(s string) bool { return within(rel, s) }) {
			return "home-secret"
		}
	}
	if slices.ContainsFunc(host.AllowSources, func(a string) bool { return within(src, a) }) {
		return ""
	}
	if slices.ContainsFunc(systemDirs, func(d string) bool { return within(src, d) }) {
		return "system-directory"
	}
	if !m.hasOption("ro") && slices.ContainsFunc(readOnlyDirs, func(d string) bool { return within(src, d) }) {
		return "writable-system-directory"
	}
	return ""
}

// withoutCgroup is host with a cgroup inode that cannot match the
// sandbox's (which is sandboxCgroup).
func withoutCgroup(host map[string]uint64, sandboxCgroup uint64) map[string]uint64 {
	out := make(map[string]uint64, len(host))
	for k, v := range host {
		out[k] = v
	}
	out["cgroup"] = sandboxCgroup + 1
	return out
}
