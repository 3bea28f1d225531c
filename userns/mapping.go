package userns

import (
	"errors"
	"fmt"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// ErrHostRoot is returned when a mapping would give a container id host id 0.
var ErrHostRoot = errors.New("mapping would reach host root (id 0)")

// Mappings is the uid and gid mapping of one sandbox, ready for the spec's
// linux.uidMappings and linux.gidMappings.
type Mappings struct {
	UIDs []specs.LinuxIDMapping
	GIDs []specs.LinuxIDMapping
}

// Keep names the host ids that the agent's uid and gid map to instead of
// their place in the slot (Podman's keep-id), normally the workspace owner,
// so that files the agent writes come out owned by that user.
type Keep struct {
	UID uint32
	GID uint32
}

// ForSlot maps container ids 0..slot.Size-1 onto slot, the agent's uid and
// gid (agentUID, agentGID inside) onto keep when keep is not nil. See MapRange.
func ForSlot(slot Slot, agentUID, agentGID uint32, keep *Keep) (Mappings, error) {
	var ku, kg *uint32
	if keep != nil {
		ku, kg = &keep.UID, &keep.GID
	}
	u, err := MapRange(slot.UID, slot.Size, agentUID, ku)
	if err != nil {
		return Mappings{}, fmt.Errorf("uid mapping: %w", err)
	}
	g, err := MapRange(slot.GID, slot.Size, agentGID, kg)
	if err != nil {
		return Mappings{}, fmt.Errorf("gid mapping: %w", err)
	}
	return Mappings{UIDs: u, GIDs: g}, nil
}

// MapRange builds the mapping for one kind of id: container id i maps to host
// id base+i for i in 0..size-1, except that agent maps to *keep when keep is
// not nil. The result is sorted by container id, has no two container ids on
// one host id, and never maps to host id 0.
//
//   - agent inside 0..size-1 with keep: the slot splits around agent, and
//     agent maps alone to keep (host id base+agent stays unused);
//   - agent outside 0..size-1 with keep: the whole slot, plus agent -> keep;
//   - agent outside 0..size-1 without keep: an error, the agent would run
//     as an unmapped id;
//   - keep inside the slot's host range: allowed only where it equals
//     base+agent (then the mapping is the plain slot), otherwise two
//     container ids would share one host id.
func MapRange(base, size, agent uint32, keep *uint32) ([]specs.LinuxIDMapping, error) {
	if err := checkRange(base, size); err != nil {
		return nil, err
	}
	if keep == nil || (agent < size && *keep == base+agent) {
		if agent >= size {
			return nil, fmt.Errorf("agent id %d lies outside the mapped container ids 0-%d and no keep id was given", agent, size-1)
		}
		return []specs.LinuxIDMapping{{ContainerID: 0, HostID: base, Size: size}}, nil
	}
	if *keep == 0 {
		return nil, fmt.Errorf("keep id: %w; the workspace owner is root, so the agent needs an unprivileged host id", ErrHostRoot)
	}
	if rangesOverlap(*keep, 1, base, size) {
		return nil, fmt.Errorf("keep id %d lies inside the slot %d-%d at another container id than the agent's %d", *keep, base, uint64(base)+uint64(size)-1, agent)
	}
	keepMap := specs.LinuxIDMapping{ContainerID: agent, HostID: *keep, Size: 1}
	if agent >= size {
		return []specs.LinuxIDMapping{{ContainerID: 0, HostID: base, Size: size}, keepMap}, nil
	}
	var out []specs.LinuxIDMapping
	if agent > 0 {
		out = append(out, specs.LinuxIDMapping{ContainerID: 0, HostID: base, Size: agent})
	}
	out = append(out, keepMap)
	if rest := size - agent - 1; rest > 0 {
		out = append(out, specs.LinuxIDMapping{ContainerID: agent + 1, HostID: base + agent + 1, Size: rest})
	}
	return out, nil
}

// checkRange refuses an empty range, one that wraps past the largest id and
// one that contains host id 0.
func checkRange(base, size uint32) error {
	switch {
	case size == 0:
		return errors.New("empty id range")
	case base == 0:
		return fmt.Errorf("range starting at 0: %w", ErrHostRoot)
	case uint64(base)+uint64(size) > maxID+1:
		return fmt.Errorf("range %d+%d runs past the largest id %d", base, size, uint32(maxID))
	}
	return nil
}
