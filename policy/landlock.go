package policy

import "sort"

// Landlock is the plan's Landlock ruleset for the agent, which
// agentbox-init applies where no SELinux or AppArmor label confines it:
// the only paths the agent may access, and its TCP.
type Landlock struct {
	// Paths are the only filesystem locations the agent may access.
	Paths []LandlockPath `json:"paths"`
	// RestrictTCP limits TCP connect and bind to ConnectTCP and BindTCP
	// (Landlock ABI 4 and later; older kernels leave TCP to the network
	// namespace, which the run records with the ABI).
	RestrictTCP bool     `json:"restrict_tcp,omitempty"`
	ConnectTCP  []uint16 `json:"connect_tcp,omitempty"`
	BindTCP     []uint16 `json:"bind_tcp,omitempty"`
}

// LandlockPath is one path of a Landlock ruleset.
type LandlockPath struct {
	Path string `json:"path"`
	// Write grants read-write access; false is read-only (read and execute).
	Write bool `json:"write,omitempty"`
	// IoctlDev allows ioctl on device files below Path (ABI 5), as a TTY needs.
	IoctlDev bool `json:"ioctl_dev,omitempty"`
	// Optional skips the path when it does not exist.
	Optional bool `json:"optional,omitempty"`
}

// resolveLandlock limits the agent's file system access to the plan's
// paths where no LSM label confines it, and its TCP to the gateway's port
// unless the policy allows local TCP. A container engine's sandbox has no
// agentbox-init to apply it.
func (r *resolver) resolveLandlock() error {
	p := r.plan
	if r.user() {
		r.userLandlock()
		return nil
	}
	if r.gvisor() && !r.engine() {
		r.residual("gvisor-landlock-absent", "Landlock does not exist in gVisor's Sentry, which serves the agent's system calls instead of the host kernel: no Landlock ruleset applies to the agent; "+
			"the Sentry's own kernel confines it (its VFS over runsc's mounts, the spec's seccomp filter applied by the Sentry, the host seccomp filter on the Sentry process), and the probe kernel-as-planned shows the Sentry answering")
		r.residual("gvisor-sentry-cgroup-namespace", "runsc's sandbox process, the Sentry, stays in the host's cgroup namespace; the agent sees only the Sentry's own cgroupfs. host-namespaces checks the Sentry's other namespaces")
		return nil
	}
	if p.LSM.Kind != LSMNone || r.engine() {
		return nil
	}
	paths := []LandlockPath{
		{Path: "/etc"},
		{Path: "/proc"},
		{Path: "/sys", Optional: true},
		{Path: "/dev", Write: true, IoctlDev: true},
	}
	for link := range p.Rootfs.Symlinks {
		paths = append(paths, LandlockPath{Path: link, Optional: true})
	}
	for _, m := range p.Mounts {
		// A cover's socket may be removed on the host while the sandbox
		// starts (another run's canary socket, when two runs share a
		// workspace), which detaches the cover inside: then there is
		// nothing left there to grant, and the workspace's own rule
		// governs the path.
		paths = append(paths, LandlockPath{Path: m.Destination, Write: !m.ReadOnly, Optional: m.Kind == KindCover})
	}
	sort.Slice(paths, func(i, j int) bool { return paths[i].Path < paths[j].Path })
	ll := &Landlock{Paths: paths}
	if p.GatewaySocket != "" && !p.Network.LocalTCP {
		port := uint16(GatewayPort)
		ll.RestrictTCP, ll.ConnectTCP, ll.BindTCP = true, []uint16{port}, []uint16{port}
	}
	p.Landlock = ll
	return nil
}
