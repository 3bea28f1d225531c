package userns

import (
	"errors"
	"iter"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// firstN collects up to n slots of seq.
func firstN(seq iter.Seq[Slot], n int) []Slot {
	var out []Slot
	for s := range seq {
		if len(out) == n {
			break
		}
		out = append(out, s)
	}
	return out
}

func bslot(base uint32) Slot { return Slot{UID: base, GID: base, Size: SlotSize} }

var debianPasswd = []PasswdEntry{{"root", 0, 0}, {"nobody", 65534, 65534}, {"ana", 1000, 1000}}

func TestSlots(t *testing.T) {
	tests := []struct {
		name    string
		host    HostIDs
		n       int
		source  Source
		want    []Slot
		wantErr string
	}{
		{
			name:   "builtin on a bare host",
			host:   HostIDs{Passwd: debianPasswd},
			n:      3,
			source: SourceBuiltin,
			want:   []Slot{bslot(100000), bslot(165536), bslot(231072)},
		},
		{
			name: "builtin skips other users' subuid and subgid ranges",
			host: HostIDs{
				SubUIDs: []SubIDEntry{{"ana", 100000, 65536}},
				SubGIDs: []SubIDEntry{{"bob", 200000, 65536}},
				Passwd:  debianPasswd,
			},
			n:      3,
			source: SourceBuiltin,
			want:   []Slot{bslot(265536), bslot(331072), bslot(396608)},
		},
		{
			name: "builtin skips a passwd uid, a passwd gid and a group gid",
			host: HostIDs{
				Passwd: []PasswdEntry{{"svc", 120000, 5}, {"odd", 7, 300000}},
				Groups: []GroupEntry{{"big", 400000}},
			},
			n:      3,
			source: SourceBuiltin,
			want:   []Slot{bslot(120001), bslot(185537), bslot(300001)},
		},
		{
			name:   "builtin ends below the top of the id space",
			host:   HostIDs{SubUIDs: []SubIDEntry{{"ana", 100000, 4294967295 - 100000 - 65536}}},
			n:      3,
			source: SourceBuiltin,
			want:   []Slot{bslot(4294967295 - 65536)},
		},
		{
			name:   "builtin exhausted",
			host:   HostIDs{SubUIDs: []SubIDEntry{{"ana", 1, 4294967294}}},
			n:      3,
			source: SourceBuiltin,
		},
		{
			name: "dedicated by name, split into slots and paired",
			host: HostIDs{
				SubUIDs: []SubIDEntry{{"ana", 100000, 65536}, {"agentbox", 1000000, 3*65536 + 10}},
				SubGIDs: []SubIDEntry{{"agentbox", 2000000, 65536}, {"agentbox", 3000000, 65536}},
				Passwd:  debianPasswd,
			},
			n:      5,
			source: SourceDedicated,
			want:   []Slot{{1000000, 2000000, SlotSize}, {1065536, 3000000, SlotSize}},
		},
		{
			name: "dedicated by the agentbox user's uid",
			host: HostIDs{
				SubUIDs: []SubIDEntry{{"999", 1000000, 65536}},
				SubGIDs: []SubIDEntry{{"agentbox", 1000000, 65536}},
				Passwd:  append([]PasswdEntry{{"agentbox", 999, 999}}, debianPasswd...),
			},
			n:      5,
			source: SourceDedicated,
			want:   []Slot{bslot(1000000)},
		},
		{
			name:    "dedicated in subuid only",
			host:    HostIDs{SubUIDs: []SubIDEntry{{"agentbox", 1000000, 65536}}},
			source:  SourceDedicated,
			wantErr: "only one of /etc/subuid and /etc/subgid",
		},
		{
			name: "dedicated too small",
			host: HostIDs{
				SubUIDs: []SubIDEntry{{"agentbox", 1000000, 65535}},
				SubGIDs: []SubIDEntry{{"agentbox", 1000000, 65536}},
			},
			source:  SourceDedicated,
			wantErr: "smaller than one slot",
		},
		{
			name: "dedicated overlaps another user's subuids",
			host: HostIDs{
				SubUIDs: []SubIDEntry{{"agentbox", 100000, 65536}, {"ana", 150000, 10}},
				SubGIDs: []SubIDEntry{{"agentbox", 100000, 65536}},
			},
			source:  SourceDedicated,
			wantErr: "overlaps host ids 150000-150009",
		},
		{
			name: "dedicated gid range overlaps a group",
			host: HostIDs{
				SubUIDs: []SubIDEntry{{"agentbox", 100000, 65536}},
				SubGIDs: []SubIDEntry{{"agentbox", 100000, 65536}},
				Groups:  []GroupEntry{{"g", 100001}},
			},
			source:  SourceDedicated,
			wantErr: "dedicated uid range at 100000 overlaps host ids 100001-100001",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.host.Source(); got != tt.source {
				t.Errorf("Source = %q, want %q", got, tt.source)
			}
			seq, err := tt.host.Slots()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, firstN(seq, tt.n)); diff != "" {
				t.Errorf("Slots (-want +got):\n%s", diff)
			}
		})
	}
}

func TestIncompleteDedicatedIsSentinel(t *testing.T) {
	_, err := HostIDs{SubGIDs: []SubIDEntry{{"agentbox", 1000000, 65536}}}.Slots()
	if !errors.Is(err, ErrIncompleteDedicated) {
		t.Errorf("err = %v, want ErrIncompleteDedicated", err)
	}
}

// TestBuiltinNeverTouchesForbidden walks many slots of a crowded host and
// checks each against every forbidden id directly.
func TestBuiltinNeverTouchesForbidden(t *testing.T) {
	h := HostIDs{
		SubUIDs: []SubIDEntry{{"a", 100000, 65536}, {"b", 170000, 1}, {"c", 500000, 1000000}},
		SubGIDs: []SubIDEntry{{"a", 100000, 65536}, {"d", 2000000, 7}},
		Passwd:  []PasswdEntry{{"x", 3000000, 3100000}, {"y", 1000, 1000}},
		Groups:  []GroupEntry{{"z", 3200000}},
	}
	seq, err := h.Slots()
	if err != nil {
		t.Fatal(err)
	}
	slots := firstN(seq, 200)
	if len(slots) != 200 {
		t.Fatalf("got %d slots, want 200", len(slots))
	}
	var bad []Slot
	for _, e := range append(h.SubUIDs, h.SubGIDs...) {
		bad = append(bad, Slot{e.Start, e.Start, e.Count})
	}
	for _, id := range []uint32{3000000, 3100000, 1000, 3200000} {
		bad = append(bad, Slot{id, id, 1})
	}
	for i, s := range slots {
		if s.UID < BuiltinBase {
			t.Errorf("slot %v below BuiltinBase", s)
		}
		for _, b := range bad {
			if s.overlaps(b) {
				t.Errorf("slot %v overlaps forbidden %v", s, b)
			}
		}
		if i > 0 && slots[i-1].overlaps(s) {
			t.Errorf("slots %v and %v overlap", slots[i-1], s)
		}
	}
}
