package selftest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

func statusProbes() []Probe {
	return []Probe{
		{
			Name: "capabilities-zero", Group: GroupKernel, Expect: Deny, run: probeCapabilities,
			Summary: "CapEff, CapPrm, CapBnd and CapAmb are all empty",
		},
		{
			Name: "seccomp-filter", Group: GroupKernel, Expect: Deny, run: probeSeccomp,
			Summary: "a seccomp filter is active (Seccomp: 2)",
		},
		{
			Name: "no-new-privs", Group: GroupKernel, Expect: Deny, run: probeNoNewPrivs,
			Summary: "no_new_privs is set (NoNewPrivs: 1)",
		},
		{
			Name: "uid-map-non-identity", Group: GroupKernel, Expect: Deny, run: probeUIDMap,
			Summary: "the process is in a user namespace that does not map host root",
		},
		{
			Name: "setuid-gain-denied", Group: GroupKernel, Expect: Deny, run: probeSetuid, shares: reading(mountTable),
			Summary: "no setuid-root binary can raise privileges",
		},
	}
}

func readStatus(e *Env) (map[string]string, error) {
	b, err := os.ReadFile(filepath.Join(e.Proc, "self", "status"))
	if err != nil {
		return nil, err
	}
	return ParseStatus(b), nil
}

// decideCapabilities: all four sets zero is DENY; any set held is ALLOW.
func decideCapabilities(st map[string]string) (Decision, string) {
	var held []string
	for _, k := range []string{"CapEff", "CapPrm", "CapBnd", "CapAmb"} {
		v, ok := st[k]
		if !ok {
			return Unknown, k + "-missing"
		}
		if strings.Trim(v, "0") != "" {
			held = append(held, k)
		}
	}
	if len(held) > 0 {
		return Allow, "held:" + strings.Join(held, ",")
	}
	return Deny, "none"
}

// decideSeccomp: mode 2 (filter) or 1 (strict) is DENY, 0 ALLOW.
func decideSeccomp(st map[string]string) (Decision, string) {
	switch st["Seccomp"] {
	case "2":
		return Deny, "filter"
	case "1":
		return Deny, "strict"
	case "0":
		return Allow, "disabled"
	}
	return Unknown, "seccomp-field-missing"
}

// decideNoNewPrivs: NoNewPrivs 1 is DENY, 0 ALLOW.
func decideNoNewPrivs(st map[string]string) (Decision, string) {
	switch st["NoNewPrivs"] {
	case "1":
		return Deny, "set"
	case "0":
		return Allow, "unset"
	}
	return Unknown, "nonewprivs-field-missing"
}

// statusProbe runs decide on the process's status file.
func statusProbe(e *Env, decide func(map[string]string) (Decision, string)) outcome {
	st, err := readStatus(e)
	if err != nil {
		return outcome{target: "/proc/self/status", decision: Unknown, observed: "status-unreadable", detail: err.Error()}
	}
	d, o := decide(st)
	return outcome{target: "/proc/self/status", decision: d, observed: o, detail: "status: " + o}
}

func probeCapabilities(e *Env) outcome { return statusProbe(e, decideCapabilities) }
func probeSeccomp(e *Env) outcome      { return statusProbe(e, decideSeccomp) }
func probeNoNewPrivs(e *Env) outcome   { return statusProbe(e, decideNoNewPrivs) }

// decideIDMap: the initial namespace's identity map, or any map that maps
// host root, is ALLOW; any other map is DENY.
func decideIDMap(m []IDMapRange) (Decision, string) {
	switch {
	case isInitialIDMap(m):
		return Allow, "identity"
	case mapsHostRoot(m):
		return Allow, "host-root-mapped"
	case len(m) == 0:
		return Unknown, "empty"
	}
	return Deny, "mapped"
}

// decideIDMapInside judges the map as the sandbox sees it, relative to
// its parent user namespace, which need not be the host's: a rootless
// launcher's runtime runs in an outer namespace where 0 is the invoking
// user. So only root inside mapping to the parent's root is ALLOW here;
// another id on the parent's 0 is the rootless keep-id map, and whether
// that parent is the host is host-uid-map's to judge, from the host.
func decideIDMapInside(m []IDMapRange) (Decision, string) {
	switch {
	case isInitialIDMap(m):
		return Allow, "identity"
	case len(m) == 0:
		return Unknown, "empty"
	}
	for _, r := range m {
		if r.Inside == 0 && r.Outside == 0 {
			return Allow, "root-maps-parent-root"
		}
	}
	if mapsHostRoot(m) {
		return Deny, "maps-parent-root"
	}
	return Deny, "mapped"
}

func probeUIDMap(e *Env) outcome {
	b, err := os.ReadFile(filepath.Join(e.Proc, "self", "uid_map"))
	if err != nil {
		return outcome{target: "/proc/self/uid_map", decision: Unknown, observed: "uid-map-unreadable", detail: err.Error()}
	}
	m, err := ParseIDMap(b)
	if err != nil {
		return outcome{target: "/proc/self/uid_map", decision: Unknown, observed: "uid-map-malformed", detail: err.Error()}
	}
	d, o := decideIDMapInside(m)
	return outcome{target: "/proc/self/uid_map", decision: d, observed: o, detail: fmt.Sprintf("uid_map %v: %s", m, o)}
}

// setuidCandidates are the usual setuid-root binaries.
var setuidCandidates = []string{
	"/usr/bin/su", "/bin/su", "/usr/bin/sudo", "/usr/bin/passwd", "/usr/bin/mount",
	"/bin/mount", "/usr/bin/newgrp", "/usr/bin/chsh", "/usr/bin/chfn", "/usr/bin/gpasswd", "/usr/bin/pkexec",
	"/usr/bin/umount", "/bin/busybox", "/usr/lib/dbus-1.0/dbus-daemon-launch-helper", "/usr/bin/fusermount3",
}

// probeSetuid: with no_new_privs set, exec never raises privileges. Without
// it, a setuid file owned by a uid that maps to root, on a mount without
// nosuid, is a way up; finding none among the usual ones proves nothing.
func probeSetuid(e *Env) outcome {
	st, err := readStatus(e)
	if err != nil {
		return outcome{target: "exec", decision: Unknown, observed: "status-unreadable", detail: err.Error()}
	}
	if st["NoNewPrivs"] == "1" {
		return outcome{target: "exec", decision: Deny, observed: "no-new-privs", detail: "no_new_privs is set: exec cannot raise privileges"}
	}
	mounts, _ := e.readMounts()
	for _, p := range setuidCandidates {
		var s unix.Stat_t
		if unix.Stat(p, &s) != nil || s.Mode&unix.S_ISUID == 0 || s.Uid != 0 {
			continue
		}
		if m, ok := mountOf(mounts, p); !ok || !m.hasOption("nosuid") {
			return outcome{
				target: p, decision: Allow, observed: "setuid-root-binary",
				detail: p + " is setuid root on a mount without nosuid and no_new_privs is unset",
			}
		}
	}
	return outcome{
		target: "exec", decision: Unknown, observed: "no-new-privs-unset",
		detail: "no_new_privs is unset; no usual setuid-root binary found, which does not prove there is none",
	}
}

// mountOf returns the mount that holds path p (the longest mount point above it).
func mountOf(mounts []Mount, p string) (Mount, bool) {
	best, found := Mount{}, false
	for _, m := range mounts {
		if within(p, m.MountPoint) && (!found || len(m.MountPoint) >= len(best.MountPoint)) {
			best, found = m, true
		}
	}
	return best, found
}
