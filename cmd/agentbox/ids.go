package main

import (
	"fmt"
	"os/user"
	"strconv"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/agentbox/agentbox/policy"
	"github.com/agentbox/agentbox/userns"
)

// idAllocation is the run's share of host ids: a leased slot as root, the
// invoking user's own ids (and subordinate range) rootless.
type idAllocation struct {
	alloc    *userns.Allocator
	lease    *userns.Lease
	rootless *userns.Rootless
}

// allocateIDs leases an id slot (as root) and installs the id mapper the
// planner calls. With dry set nothing is leased: the first free slot is
// shown as the one a run would get.
func (l *launch) allocateIDs(dry bool) error {
	if l.host.EUID != 0 {
		l.host.MapIDs = l.rootlessMapper()
		return nil
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
		return firstFreeSlot(l.ids.alloc)
	}
	lease, err := l.ids.alloc.Allocate(l.runID)
	if err != nil {
		return userns.Slot{}, err
	}
	l.ids.lease = &lease
	l.meta.Lease = lease.RunID
	return lease.Slot, l.runDir.WriteMeta(l.meta)
}

func firstFreeSlot(a *userns.Allocator) (userns.Slot, error) {
	leases, err := a.Leases()
	if err != nil {
		return userns.Slot{}, err
	}
	taken := map[uint32]bool{}
	for _, l := range leases {
		taken[l.Slot.UID] = true
	}
	slots, err := a.Host.Slots()
	if err != nil {
		return userns.Slot{}, err
	}
	for s := range slots {
		if !taken[s.UID] {
			return s, nil
		}
	}
	return userns.Slot{}, userns.ErrExhausted
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

// rootlessMapper maps the invoking user's ids, plus its subordinate range
// where newuidmap/newgidmap can install it.
func (l *launch) rootlessMapper() func(policy.IDRequest) ([]specs.LinuxIDMapping, []specs.LinuxIDMapping, error) {
	return func(req policy.IDRequest) ([]specs.LinuxIDMapping, []specs.LinuxIDMapping, error) {
		ids, err := userns.ReadHostIDs("/etc")
		if err != nil {
			return nil, nil, err
		}
		name := strconv.FormatUint(uint64(l.host.EUID), 10)
		if u, err := user.LookupId(name); err == nil {
			name = u.Username
		}
		r, err := userns.RootlessMappings(userns.RootlessInput{
			Name: name, UID: l.host.EUID, GID: l.host.EGID, AgentUID: req.UID, AgentGID: req.GID,
			SubUIDs: ids.SubUIDs, SubGIDs: ids.SubGIDs, NewIDMap: userns.HaveNewIDMap(),
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
