package selftest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Under gVisor (runsc) the agent's system calls are served by the Sentry,
// a kernel in user space, not by the host kernel; the host sees one
// process, the Sentry, where runc shows init and the agent. Some probes
// therefore answer differently there, and each difference is handled
// here, by name, with the layer gVisor provides instead, probed:
//
//   - kernel-as-planned: the kernel that answers is the Sentry, shown by
//     uname(2) differing from the host's and by landlock_create_ruleset,
//     which the host kernel serves, failing with ENOSYS or EOPNOTSUPP.
//     Landlock thus does not exist for the agent: the launcher plans
//     none and says so (a residual).
//   - kernel-cmdline-hidden: /proc/cmdline is the Sentry's own; DENY when
//     it differs from the host's (compared by digest).
//   - device-nodes-minimal: /dev/fuse and /dev/net/tun are devices the
//     Sentry implements (SentryDevices), not host device nodes.
//   - uid-map-non-identity: the Sentry's user namespace is its own
//     (identity inside); the map that bounds the sandbox is that of the
//     Sentry's host process, which host-uid-map reads (SentrySubstitute).
//   - host-*: they read the Sentry process (SandboxPIDs.Sentry), whose
//     capabilities are judged by decideSentryCapabilities;
//     host-init-uid-separate has no two host processes to compare and is
//     decided by the probes that try init from the agent inside.

// KernelPlan says which kernel the sandbox's processes should find, and
// carries the host's facts the probes compare with as digests, so that
// init's configuration holds none of the host's boot facts.
type KernelPlan struct {
	// GVisor is set when runsc runs the sandbox.
	GVisor bool `json:"gvisor,omitempty"`
	// HostRelease is the sha256 of the host's uname release and version
	// ("RELEASE VERSION").
	HostRelease string `json:"host_release"`
	// HostCmdline is the sha256 of the host's /proc/cmdline, "" if unread.
	HostCmdline string `json:"host_cmdline,omitempty"`
	// HostLandlockABI is the host kernel's Landlock ABI.
	HostLandlockABI int `json:"host_landlock_abi"`
}

// SentryDevices are the device nodes gVisor's Sentry implements itself in
// a sandbox's /dev.
var SentryDevices = []string{"/dev/fuse", "/dev/net/tun"}

// Digest is the hex sha256 of b, as KernelPlan carries host facts.
func Digest(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// HostKernel reads the facts of the calling process's kernel for a plan.
func HostKernel(gvisor bool) KernelPlan {
	k := KernelPlan{GVisor: gvisor, HostRelease: Digest([]byte(unameRelease())), HostLandlockABI: LandlockABI()}
	if b, err := os.ReadFile("/proc/cmdline"); err == nil {
		k.HostCmdline = Digest(b)
	}
	return k
}

// decideKernel judges the kernel the probe found: release is this
// kernel's uname release and version, llErr the error of the Landlock ABI
// query ("" when it answered).
func decideKernel(k KernelPlan, release, llErr string) (Decision, string, string) {
	same := Digest([]byte(release)) == k.HostRelease
	if !k.GVisor {
		if same {
			return Deny, "host-kernel", "uname matches the host's: the host kernel serves the sandbox, as planned"
		}
		return Allow, "other-kernel", "uname differs from the host's, but the plan runs on the host kernel"
	}
	switch {
	case same:
		return Allow, "host-kernel", "uname matches the host's: the host kernel, not gVisor's Sentry, serves the sandbox"
	case k.HostLandlockABI > 0 && llErr == "":
		return Allow, "landlock-answered", "the Landlock ABI query was answered: a kernel other than the Sentry serves it"
	case k.HostLandlockABI > 0:
		return Deny, "sentry", fmt.Sprintf("uname differs from the host's, and landlock_create_ruleset fails with %s where the host kernel has Landlock ABI %d: gVisor's Sentry serves the agent's system calls; Landlock does not exist here", llErr, k.HostLandlockABI)
	}
	return Deny, "sentry", "uname differs from the host's (the host has no Landlock to compare with): gVisor's Sentry serves the agent's system calls"
}

// decideSentryCmdline: the Sentry's own /proc/cmdline is DENY, the host's
// ALLOW.
func decideSentryCmdline(k KernelPlan, b []byte) (Decision, string) {
	if k.HostCmdline == "" {
		return Unknown, "host-cmdline-unknown"
	}
	if Digest(b) == k.HostCmdline {
		return Allow, "host-cmdline"
	}
	return Deny, "sentry-own"
}

// sentryCaps are the capabilities runsc leaves its sandbox process, in the
// Sentry's own user namespace: CHOWN, DAC_OVERRIDE, DAC_READ_SEARCH, FOWNER
// and FSETID for its direct file access (runsc boot's directfs set), and
// SYS_PTRACE on the ptrace platform. They are the bits agentbox accepts on
// the Sentry, and only with a uid map that keeps host root out.
const sentryCaps uint64 = 1<<0 | 1<<1 | 1<<2 | 1<<3 | 1<<4 | 1<<19

// decideSentryCapabilities judges the Sentry process's status: no ambient
// capability, effective and permitted ones within sentryCaps, and a user
// namespace whose map (mapDecision, decideIDMap's) keeps host root out.
func decideSentryCapabilities(st map[string]string, mapDecision Decision, mapObserved string) (Decision, string) {
	if mapDecision != Deny {
		return Allow, "sentry-caps-with-" + mapObserved
	}
	var held []string
	for _, k := range []string{"CapEff", "CapPrm", "CapAmb"} {
		v, ok := st[k]
		if !ok {
			return Unknown, k + "-missing"
		}
		bits, err := strconv.ParseUint(v, 16, 64)
		if err != nil {
			return Unknown, k + "-malformed"
		}
		if (k == "CapAmb" && bits != 0) || bits&^sentryCaps != 0 {
			return Allow, fmt.Sprintf("beyond-sentry:%s=%s", k, v)
		}
		if bits != 0 {
			held = append(held, k+"="+v)
		}
	}
	if len(held) == 0 {
		return Deny, "none"
	}
	return Deny, "sentry-userns:" + strings.Join(held, ",")
}

func sentryCapabilities(dir string) outcome {
	m := hostIDMap(dir)
	o := hostStatus(dir, func(st map[string]string) (Decision, string) {
		return decideSentryCapabilities(st, m.decision, m.observed)
	})
	o.detail = fmt.Sprintf("gVisor's Sentry process: %s; its user namespace: %s", o.observed, m.detail)
	return o
}

// SentrySubstitute decides, under gVisor, the results whose own check
// cannot see the boundary there, from the checks that do, and says so in
// each: uid-map-non-identity from host-uid-map (the Sentry process's map),
// host-init-uid-separate from the probes that try init from the agent
// inside (ptrace, prlimit, kill of pid 1). A substituted check that is
// missing leaves UNKNOWN, never a pass.
func SentrySubstitute(inside, host []Result) {
	by := map[string]Result{}
	for _, r := range append(append([]Result{}, inside...), host...) {
		by[r.Probe] = r
	}
	sub := func(r *Result, from []string, why string) {
		d, obs := Deny, []string{}
		for _, n := range from {
			s, ok := by[n]
			switch {
			case !ok:
				d = Unknown
				obs = append(obs, n+"=missing")
				continue
			case s.Decision == Allow:
				d = Allow
			case s.Decision == Unknown && d == Deny:
				d = Unknown
			}
			obs = append(obs, n+"="+s.Observed)
		}
		r.Decision, r.Observed = d, "gvisor:"+strings.Join(obs, ",")
		r.Detail = why + " (was " + r.Detail + ")"
		r.Evidence = r.Digest()
	}
	for i := range inside {
		if inside[i].Probe == "uid-map-non-identity" {
			sub(&inside[i], []string{"host-uid-map"}, "under gVisor /proc/self/uid_map is the Sentry's own user namespace; the map that bounds the sandbox is the Sentry process's on the host, read by host-uid-map")
		}
	}
	for i := range host {
		if host[i].Probe == "host-init-uid-separate" {
			sub(&host[i], []string{"ptrace-pid1-denied", "prlimit-pid1-denied", "kill-pid1-denied"}, "under gVisor init and the agent are tasks of one host process, the Sentry, which keeps them apart; the probes that try init from the agent decide")
		}
	}
}

// sentryDir is procRoot/pid as a path.
func sentryDir(procRoot string, pid int) string { return filepath.Join(procRoot, strconv.Itoa(pid)) }
