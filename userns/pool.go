package userns

import (
	"cmp"
	"errors"
	"fmt"
	"iter"
	"path/filepath"
	"slices"
)

const (
	// SlotSize is the number of uids (and as many gids) each run gets.
	SlotSize = 65536
	// BuiltinBase is the first host id of the built-in range used when the
	// host has no dedicated subuid/subgid entry for DedicatedOwner.
	BuiltinBase = 100000
	// DedicatedOwner is the /etc/subuid and /etc/subgid owner whose ranges
	// agentbox uses, split into SlotSize slots, when both files name it.
	DedicatedOwner = "agentbox"
)

// Source names where a host's slots come from.
type Source string

// The two slot sources.
const (
	SourceDedicated Source = "dedicated" // /etc/subuid and /etc/subgid entries for DedicatedOwner
	SourceBuiltin   Source = "builtin"   // BuiltinBase upwards, around every id the host uses
)

// ErrIncompleteDedicated is returned when only one of /etc/subuid and
// /etc/subgid has an entry for DedicatedOwner.
var ErrIncompleteDedicated = errors.New("dedicated id range is incomplete")

// Slot is one run's share of host ids: uids UID..UID+Size-1 and gids
// GID..GID+Size-1. In the built-in range UID == GID.
type Slot struct {
	UID  uint32 `json:"uid"`
	GID  uint32 `json:"gid"`
	Size uint32 `json:"size"`
}

// overlaps reports whether s and o share a uid or a gid.
func (s Slot) overlaps(o Slot) bool {
	return rangesOverlap(s.UID, s.Size, o.UID, o.Size) || rangesOverlap(s.GID, s.Size, o.GID, o.Size)
}

func rangesOverlap(a, an, b, bn uint32) bool {
	return uint64(a) < uint64(b)+uint64(bn) && uint64(b) < uint64(a)+uint64(an)
}

// HostIDs is what allocation needs to know of the host's id databases.
type HostIDs struct {
	SubUIDs []SubIDEntry
	SubGIDs []SubIDEntry
	Passwd  []PasswdEntry
	Groups  []GroupEntry
}

// ReadHostIDs reads subuid, subgid, passwd and group under the directory etc
// (normally "/etc"). Missing subuid/subgid files count as empty; a missing
// passwd or group file is an error, since allocation could not avoid the
// ids they list.
func ReadHostIDs(etc string) (HostIDs, error) {
	var h HostIDs
	var err error
	if h.SubUIDs, err = readFile(filepath.Join(etc, "subuid"), true, ParseSubIDs); err != nil {
		return h, err
	}
	if h.SubGIDs, err = readFile(filepath.Join(etc, "subgid"), true, ParseSubIDs); err != nil {
		return h, err
	}
	if h.Passwd, err = readFile(filepath.Join(etc, "passwd"), false, ParsePasswd); err != nil {
		return h, err
	}
	h.Groups, err = readFile(filepath.Join(etc, "group"), false, ParseGroup)
	return h, err
}

// Source reports which source Slots draws from.
func (h HostIDs) Source() Source {
	u, g := h.dedicated()
	if len(u) > 0 || len(g) > 0 {
		return SourceDedicated
	}
	return SourceBuiltin
}

// Slots returns the candidate slots in allocation order. With dedicated
// entries it splits them into SlotSize slots (pairing the n-th uid slot with
// the n-th gid slot) and refuses entries that are incomplete, too small or
// overlap another user's ids. Otherwise it walks up from BuiltinBase in
// SlotSize steps, stepping over every subuid/subgid range of other owners and
// every uid and gid in passwd and group, so that a sandbox never shares a
// host id with a user or a user's rootless containers.
func (h HostIDs) Slots() (iter.Seq[Slot], error) {
	if h.Source() == SourceBuiltin {
		return h.builtin(), nil
	}
	return h.dedicatedSlots()
}

// dedicated returns the subuid and subgid entries of DedicatedOwner.
func (h HostIDs) dedicated() (uids, gids []SubIDEntry) {
	for _, p := range h.Passwd {
		if p.Name == DedicatedOwner { // the files may name it by uid
			return Owned(h.SubUIDs, p.Name, p.UID), Owned(h.SubGIDs, p.Name, p.UID)
		}
	}
	return ownedByName(h.SubUIDs), ownedByName(h.SubGIDs)
}

func ownedByName(entries []SubIDEntry) []SubIDEntry {
	var out []SubIDEntry
	for _, e := range entries {
		if e.Owner == DedicatedOwner {
			out = append(out, e)
		}
	}
	return out
}

func (h HostIDs) dedicatedSlots() (iter.Seq[Slot], error) {
	uids, gids := h.dedicated()
	if len(uids) == 0 || len(gids) == 0 {
		return nil, fmt.Errorf("%w: %q has entries in only one of /etc/subuid and /etc/subgid; add the same range to both (usermod --add-subuids N-M --add-subgids N-M %s)",
			ErrIncompleteDedicated, DedicatedOwner, DedicatedOwner)
	}
	us, gs := split(uids), split(gids)
	n := min(len(us), len(gs))
	if n == 0 {
		return nil, fmt.Errorf("dedicated id range of %q is smaller than one slot of %d ids; give it at least %d ids in /etc/subuid and /etc/subgid",
			DedicatedOwner, SlotSize, SlotSize)
	}
	forbidden := h.forbidden()
	slots := make([]Slot, n)
	for i := range n {
		slots[i] = Slot{UID: us[i], GID: gs[i], Size: SlotSize}
		if iv, ok := forbidden.hit(uint64(us[i]), SlotSize); ok {
			return nil, fmt.Errorf("dedicated uid range at %d overlaps host ids %d-%d of another user; fix /etc/subuid", us[i], iv.start, iv.end-1)
		}
		if iv, ok := forbidden.hit(uint64(gs[i]), SlotSize); ok {
			return nil, fmt.Errorf("dedicated gid range at %d overlaps host ids %d-%d of another user; fix /etc/subgid", gs[i], iv.start, iv.end-1)
		}
	}
	return slices.Values(slots), nil
}

// split cuts entries into the bases of whole SlotSize slots.
func split(entries []SubIDEntry) []uint32 {
	var bases []uint32
	for _, e := range entries {
		for b := uint64(e.Start); b+SlotSize <= e.End(); b += SlotSize {
			bases = append(bases, uint32(b))
		}
	}
	return bases
}

func (h HostIDs) builtin() iter.Seq[Slot] {
	forbidden := h.forbidden()
	return func(yield func(Slot) bool) {
		for start := uint64(BuiltinBase); start+SlotSize <= maxID+1; {
			if iv, ok := forbidden.hit(start, SlotSize); ok {
				start = iv.end
				continue
			}
			if !yield(Slot{UID: uint32(start), GID: uint32(start), Size: SlotSize}) {
				return
			}
			start += SlotSize
		}
	}
}

// interval is the half-open id range [start, end).
type interval struct{ start, end uint64 }

// intervals is a sorted list of disjoint intervals.
type intervals []interval

// forbidden returns every id the host gives to someone other than
// DedicatedOwner: subuid and subgid ranges (uids and gids alike, since a
// built-in slot uses one base for both) and passwd/group ids.
func (h HostIDs) forbidden() intervals {
	var ivs []interval
	du, dg := h.dedicated()
	for _, e := range slices.Concat(h.SubUIDs, h.SubGIDs) {
		if !slices.Contains(du, e) && !slices.Contains(dg, e) {
			ivs = append(ivs, interval{uint64(e.Start), e.End()})
		}
	}
	for _, p := range h.Passwd {
		ivs = append(ivs, interval{uint64(p.UID), uint64(p.UID) + 1}, interval{uint64(p.GID), uint64(p.GID) + 1})
	}
	for _, g := range h.Groups {
		ivs = append(ivs, interval{uint64(g.GID), uint64(g.GID) + 1})
	}
	return merge(ivs)
}

// merge sorts ivs and joins overlapping or touching intervals.
func merge(ivs []interval) intervals {
	slices.SortFunc(ivs, func(a, b interval) int { return cmp.Compare(a.start, b.start) })
	var out intervals
	for _, iv := range ivs {
		if n := len(out); n > 0 && iv.start <= out[n-1].end {
			out[n-1].end = max(out[n-1].end, iv.end)
			continue
		}
		out = append(out, iv)
	}
	return out
}

// hit returns the first interval that overlaps [start, start+size).
func (ivs intervals) hit(start, size uint64) (interval, bool) {
	i, _ := slices.BinarySearchFunc(ivs, start, func(iv interval, s uint64) int {
		if iv.end <= s {
			return -1
		}
		return 1
	})
	if i < len(ivs) && ivs[i].start < start+size {
		return ivs[i], true
	}
	return interval{}, false
}
