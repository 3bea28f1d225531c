package launcher

import (
	"fmt"
	"os/user"
	"strconv"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/agentbox/agentbox/engine"
	"github.com/agentbox/agentbox/policy"
	"github.com/agentbox/agentbox/userns"
)

// idAllocation is the run's share of host ids: a leased slot as root, the
// invoking user's own ids (and subordinate range) rootless.
type idAllocation struct {
	alloc    *userns.Allocator
	lease    *userns.Lease
	rootless *userns.Rootless
	// userNS is where a rootless launcher with subordinate ids runs its
	// runtime (see engine.UserNS); nil as root or without subordinate ids.
	userNS *engine.UserNS
}

// allocateIDs leases an id slot (as root) and installs the id mapper the
// planner calls. With dry set nothing is leased: the allocator's Peek shows
// the slot a run would get.
func (l *launch) allocateIDs(dry bool) error {
	if l.host.EUID != 0 {
		return l.rootlessIDs()
	}
	ids, err := userns.ReadHostIDs("/etc")
	if err != nil {
		return err
	}
	l.ids.alloc = &userns.Allocator{Dir: l.dirs.leases(), Host: ids}
	slot, err := l.slot(dry)
	if err != nil {
		return err
	}
	l.host.MapIDs = func(req policy.IDRequest) ([]specs.LinuxIDMapping, []specs.LinuxIDMapping, error) {
		return mapSlot(slot, req)
	}
	return nil
}

func (l *launch) slot(dry bool) (userns.Slot, error) {
	if dry {
		return l.ids.alloc.Peek()
	}
	lease, err := l.ids.alloc.Allocate(l.runID)
	if err != nil {
		return userns.Slot{}, err
	}
	l.ids.lease = &lease
	l.meta.Lease = lease.RunID
	return lease.Slot, l.runDir.WriteMeta(l.meta)
}

func mapSlot(slot userns.Slot, req policy.IDRequest) (uids, gids []specs.LinuxIDMapping, err error) {
	if uids, err = userns.MapRange(slot.UID, slot.Size, req.UID, req.KeepUID); err != nil {
		return nil, nil, fmt.Errorf("uid map: %w", err)
	}
	if gids, err = userns.MapRange(slot.GID, slot.Size, req.GID, req.KeepGID); err != nil {
		return nil, nil, fmt.Errorf("gid map: %w", err)
	}
	return uids, gids, nil
}

// rootlessIDs decides between the two rootless modes: with subordinate ids
// and newuidmap, the runtime runs in an outer user namespace and the agent
// keeps this user's uid; without, the sandbox has this user's uid only.
func (l *launch) rootlessIDs() error {
	ids, err := userns.ReadHostIDs("/etc")
	if err != nil {
		return err
	}
	name := userName(l.host.EUID)
	subU, subG := userns.Owned(ids.SubUIDs, name, l.host.EUID), userns.Owned(ids.SubGIDs, name, l.host.EUID)
	l.host.RootlessSingle = len(subU) == 0 || len(subG) == 0 || !userns.HaveNewIDMap()
	if !l.host.RootlessSingle {
		l.ids.userNS = &engine.UserNS{
			Helper: l.host.InitPath, UID: l.host.EUID, GID: l.host.EGID,
			SubUID: engine.IDRange{Start: subU[0].Start, Count: subU[0].Count},
			SubGID: engine.IDRange{Start: subG[0].Start, Count: subG[0].Count},
		}
	}
	l.host.MapIDs = l.rootlessMapper(ids, name, !l.host.RootlessSingle)
	return nil
}

func userName(uid uint32) string {
	name := strconv.FormatUint(uint64(uid), 10)
	if u, err := user.LookupId(name); err == nil {
		return u.Username
	}
	return name
}

// rootlessMapper maps the invoking user's ids, plus its subordinate range
// where newuidmap/newgidmap can install it (from the host ids rootlessIDs
// read, which are not read again).
func (l *launch) rootlessMapper(ids userns.HostIDs, name string, newIDMap bool) func(policy.IDRequest) ([]specs.LinuxIDMapping, []specs.LinuxIDMapping, error) {
	return func(req policy.IDRequest) ([]specs.LinuxIDMapping, []specs.LinuxIDMapping, error) {
		r, err := userns.RootlessMappings(userns.RootlessInput{
			Name: name, UID: l.host.EUID, GID: l.host.EGID, AgentUID: req.UID, AgentGID: req.GID,
			SubUIDs: ids.SubUIDs, SubGIDs: ids.SubGIDs, NewIDMap: newIDMap,
		})
		if err != nil {
			return nil, nil, err
		}
		l.ids.rootless = &r
		return r.UIDs, r.GIDs, nil
	}
}

// releaseIDs returns the run's slot.
func (l *launch) releaseIDs() error {
	if l.ids.lease == nil {
		return nil
	}
	return l.ids.alloc.Release(l.ids.lease.RunID)
}
