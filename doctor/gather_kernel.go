package doctor

import (
	"bytes"
	"context"
	"errors"
	"strings"

	"github.com/agentbox/agentbox/engine/advisory"
	"github.com/agentbox/agentbox/policy"
	"github.com/agentbox/agentbox/userns"
)

// gatherUser reads the invoking user's account as `agentbox run` does
// (host.Tree.Account): the passwd entry, and $HOME when absolute.
func gatherUser(_ context.Context, h Host, f *Facts) {
	f.User.EUID = h.Sys.EUID()
	a := h.tree().Account(uint32(f.User.EUID), h.Sys.Getenv)
	f.User.Name, f.User.GID, f.User.Home = a.Name, a.GID, a.Home
}

func gatherOS(_ context.Context, h Host, f *Facts) { f.OS = ReadOS(h) }

// ReadOS reads the distribution release of h from os-release(5): where a
// packaged runtime's backports come from.
func ReadOS(h Host) OSRelease {
	b, ok, _ := h.read("/etc/os-release")
	if !ok {
		b, _, _ = h.read("/usr/lib/os-release")
	}
	return parseOSRelease(b)
}

// Distro is r as the advisory table's judgement takes it.
func (r OSRelease) Distro() advisory.Distro {
	return advisory.Distro{ID: r.ID, VersionID: r.VersionID}
}

// parseOSRelease reads the KEY=value lines of os-release(5).
func parseOSRelease(b []byte) OSRelease {
	kv := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), "=")
		if ok {
			kv[k] = strings.Trim(v, `"'`)
		}
	}
	return OSRelease{ID: kv["ID"], VersionID: kv["VERSION_ID"], Codename: kv["VERSION_CODENAME"], Pretty: kv["PRETTY_NAME"]}
}

func gatherKernel(_ context.Context, h Host, f *Facts) {
	f.Kernel, _ = h.readString("/proc/sys/kernel/osrelease")
}

func gatherUserNS(ctx context.Context, h Host, f *Facts) {
	f.UserNS.Max = sysctl(h, "/proc/sys/user/max_user_namespaces")
	f.UserNS.UnprivClone = sysctl(h, "/proc/sys/kernel/unprivileged_userns_clone")
	f.UserNS.AppArmorRestrict = sysctl(h, "/proc/sys/kernel/apparmor_restrict_unprivileged_userns")
	err := h.Sys.NewUserNamespace(ctx)
	f.UserNS.CreateRan = !errors.Is(err, errProbeNotRun)
	if err != nil {
		f.UserNS.CreateErr = err.Error()
	}
}

func sysctl(h Host, p string) Sysctl {
	v, ok := h.readString(p)
	return Sysctl{Present: ok, Value: v}
}

// gatherIDs decides where a sandbox's ids come from, as the launcher will:
// as root from id slots (userns.HostIDs), rootless from the user's own
// subordinate ranges (policy.RootlessIDMap, the plan's decision).
func gatherIDs(_ context.Context, h Host, f *Facts) {
	ids, err := userns.ReadHostIDs(h.path("/etc"))
	if err != nil {
		f.IDs.Err = strings.ReplaceAll(err.Error(), h.path("/etc"), "/etc")
		return
	}
	f.IDs.NewIDMap = onPath(h, "newuidmap") && onPath(h, "newgidmap")
	f.IDs.FreeStart = freeStart(append(ids.SubUIDs, ids.SubGIDs...))
	if !f.User.Rootless() {
		rootIDs(ids, f)
		return
	}
	uid := uint32(f.User.EUID)
	f.IDs.SubUIDs = userns.Owned(ids.SubUIDs, f.User.Name, uid)
	f.IDs.SubGIDs = userns.Owned(ids.SubGIDs, f.User.Name, uid)
	sub := policy.SubIDs{User: f.User.Name, NewIDMap: f.IDs.NewIDMap}
	if len(f.IDs.SubUIDs) > 0 {
		sub.UID = policy.IDRange{Start: f.IDs.SubUIDs[0].Start, Count: f.IDs.SubUIDs[0].Count}
	}
	if len(f.IDs.SubGIDs) > 0 {
		sub.GID = policy.IDRange{Start: f.IDs.SubGIDs[0].Start, Count: f.IDs.SubGIDs[0].Count}
	}
	m, res := policy.RootlessIDMap(sub) // the plan's own decision
	f.IDs.Mode = m.Mode
	if res != nil {
		f.IDs.Reason = res.Reason
	}
}

// freeStart is BuiltinBase when no entry reaches past it, else the first
// SlotSize-aligned id past every entry.
func freeStart(entries []userns.SubIDEntry) uint64 {
	end := uint64(userns.BuiltinBase)
	for _, e := range entries {
		end = max(end, e.End())
	}
	if end == userns.BuiltinBase {
		return end
	}
	const slot = uint64(userns.SlotSize)
	return (end + slot - 1) / slot * slot
}

func rootIDs(ids userns.HostIDs, f *Facts) {
	f.IDs.Source = ids.Source()
	f.IDs.SubUIDs = userns.Owned(ids.SubUIDs, userns.DedicatedOwner, ^uint32(0))
	f.IDs.SubGIDs = userns.Owned(ids.SubGIDs, userns.DedicatedOwner, ^uint32(0))
	slots, err := ids.Slots()
	if err == nil {
		for range slots {
			return
		}
		err = userns.ErrExhausted
	}
	f.IDs.SlotsErr = err.Error()
}

func onPath(h Host, name string) bool {
	_, err := h.Sys.LookPath(name)
	return err == nil
}

func gatherSeccomp(_ context.Context, h Host, f *Facts) {
	if b, ok, _ := h.read("/proc/self/status"); ok {
		for _, line := range strings.Split(string(b), "\n") {
			k, v, _ := strings.Cut(line, ":")
			switch k {
			case "Seccomp":
				f.Seccomp.Mode = strings.TrimSpace(v)
			case "Seccomp_filters":
				f.Seccomp.Filters = strings.TrimSpace(v)
			}
		}
	}
	if b, ok, _ := h.read("/proc/sys/kernel/seccomp/actions_avail"); ok {
		f.Seccomp.ActionsRead = true
		f.Seccomp.Actions = strings.Fields(string(bytes.TrimSpace(b)))
	}
}
