package launcher

import (
	"errors"
	"fmt"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/agentbox/agentbox/engine"
	"github.com/agentbox/agentbox/policy"
	"github.com/agentbox/agentbox/userns"
)

// idMap is the run's share of host ids, made after planning from the
// plan's request (policy.Identity.IDMap): the slot leased as root (or, dry,
// the one a run would get), the maps the spec renders, and the outer user
// namespace a rootless runtime runs in.
type idMap struct {
	alloc      *userns.Allocator
	lease      *userns.Lease
	uids, gids []specs.LinuxIDMapping
	// userNS is where a rootless launcher with subordinate ids runs its
	// runtime (see engine.UserNS); nil otherwise.
	userNS *engine.UserNS
}

// mapIDs makes the plan's id maps: a leased slot as root (dry, the
// allocator's Peek: nothing is leased), the plan's subordinate ranges or
// the user's own ids rootless, each checked by the planner's rules
// (policy.Identity.CheckMappings).
func (p *prepared) mapIDs() error {
	id := p.plan.Identity
	switch id.IDMap.Mode {
	case policy.IDSlot:
		slot, err := p.slot()
		if err != nil {
			return err
		}
		return p.setMaps(id, mapRanges(id, policy.IDRange{Start: slot.UID, Count: slot.Size}, policy.IDRange{Start: slot.GID, Count: slot.Size}))
	case policy.IDSubIDs:
		u, g := id.IDMap.UIDs, id.IDMap.GIDs
		p.ids.userNS = &engine.UserNS{
			Helper: p.host.InitPath, UID: p.host.EUID, GID: p.host.EGID,
			SubUID: engine.IDRange{Start: u.Start, Count: u.Count}, SubGID: engine.IDRange{Start: g.Start, Count: g.Count},
		}
		return p.setMaps(id, mapRanges(id, u, g))
	case policy.IDSingle:
		return p.setMaps(id, single(id))
	case policy.IDEngine, policy.IDHost: // an engine maps them; a host account has its own (user.go)
	}
	return fmt.Errorf("a plan whose ids %s maps has no id maps of agentbox's", id.IDMap.Mode)
}

// idMaps is a pair of id maps, or why they could not be made.
type idMaps struct {
	uids, gids []specs.LinuxIDMapping
	err        error
}

func (p *prepared) setMaps(id policy.Identity, m idMaps) error {
	if m.err != nil {
		return m.err
	}
	if err := id.CheckMappings(m.uids, m.gids); err != nil {
		return err
	}
	p.ids.uids, p.ids.gids = m.uids, m.gids
	return nil
}

// mapRanges maps container ids 0..Count-1 onto the host ranges, the
// agent's ids onto the kept ones where the plan keeps them.
func mapRanges(id policy.Identity, u, g policy.IDRange) idMaps {
	uids, err := userns.MapRange(u.Start, u.Count, id.UID, id.KeepUID)
	if err != nil {
		return idMaps{err: fmt.Errorf("uid map: %w", err)}
	}
	gids, err := userns.MapRange(g.Start, g.Count, id.GID, id.KeepGID)
	if err != nil {
		return idMaps{err: fmt.Errorf("gid map: %w", err)}
	}
	return idMaps{uids: uids, gids: gids}
}

// single maps the agent's ids, alone, onto the user's own.
func single(id policy.Identity) idMaps {
	if id.KeepUID == nil || id.KeepGID == nil {
		return idMaps{err: errors.New("a single-id plan keeps no host ids")}
	}
	return idMaps{
		uids: []specs.LinuxIDMapping{{ContainerID: id.UID, HostID: *id.KeepUID, Size: 1}},
		gids: []specs.LinuxIDMapping{{ContainerID: id.GID, HostID: *id.KeepGID, Size: 1}},
	}
}

// slot leases the run's slot, which meta.json names already (the run
// directory step names the lease of the run's id before it exists); dry,
// it is the slot a run would lease now (the allocator's Peek), and nothing
// is leased.
func (p *prepared) slot() (userns.Slot, error) {
	p.ids.alloc = &userns.Allocator{Dir: p.dirs.leases(), Host: p.hostIDs}
	if p.dry {
		return p.ids.alloc.Peek()
	}
	lease, err := p.ids.alloc.Allocate(p.run.ID)
	if err != nil {
		return userns.Slot{}, err
	}
	p.ids.lease = &lease
	if p.meta.Lease == lease.RunID {
		return lease.Slot, nil
	}
	p.meta.Lease = lease.RunID
	return lease.Slot, p.runDir.WriteMeta(p.meta)
}

// release returns the run's slot.
func (ids idMap) release() error {
	if ids.lease == nil {
		return nil
	}
	return ids.alloc.Release(ids.lease.RunID)
}
