package userns

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	specs "github.com/opencontainers/runtime-spec/specs-go"
)

func u32(v uint32) *uint32 { return &v }

type m = specs.LinuxIDMapping

func mp(c, h, n uint32) m { return m{ContainerID: c, HostID: h, Size: n} }

func TestMapRange(t *testing.T) {
	tests := []struct {
		name              string
		base, size, agent uint32
		keep              *uint32
		want              []m
		wantErr           string
		wantRoot          bool
	}{
		{
			name: "no keep", base: 100000, size: 65536, agent: 1000,
			want: []m{mp(0, 100000, 65536)},
		},
		{
			name: "keep splits around agent", base: 100000, size: 65536, agent: 1000, keep: u32(1000),
			want: []m{mp(0, 100000, 1000), mp(1000, 1000, 1), mp(1001, 101001, 64535)},
		},
		{
			name: "keep with a different inside id", base: 100000, size: 65536, agent: 1000, keep: u32(1234),
			want: []m{mp(0, 100000, 1000), mp(1000, 1234, 1), mp(1001, 101001, 64535)},
		},
		{
			name: "agent is container id 0", base: 100000, size: 65536, agent: 0, keep: u32(1000),
			want: []m{mp(0, 1000, 1), mp(1, 100001, 65535)},
		},
		{
			name: "agent is the last id", base: 100000, size: 65536, agent: 65535, keep: u32(1000),
			want: []m{mp(0, 100000, 65535), mp(65535, 1000, 1)},
		},
		{
			name: "agent outside the range with keep", base: 100000, size: 65536, agent: 70000, keep: u32(1000),
			want: []m{mp(0, 100000, 65536), mp(70000, 1000, 1)},
		},
		{
			name: "keep above the slot's host range", base: 100000, size: 65536, agent: 1000, keep: u32(4000000000),
			want: []m{mp(0, 100000, 1000), mp(1000, 4000000000, 1), mp(1001, 101001, 64535)},
		},
		{
			name: "keep equals the agent's own slot id", base: 100000, size: 65536, agent: 1000, keep: u32(101000),
			want: []m{mp(0, 100000, 65536)},
		},
		{
			name: "keep inside the slot elsewhere", base: 100000, size: 65536, agent: 1000, keep: u32(100005),
			wantErr: "inside the slot",
		},
		{
			name: "agent outside the range without keep", base: 100000, size: 65536, agent: 70000,
			wantErr: "outside the mapped container ids",
		},
		{name: "keep is host root", base: 100000, size: 65536, agent: 1000, keep: u32(0), wantRoot: true},
		{name: "base is host root", base: 0, size: 65536, agent: 1000, wantRoot: true},
		{name: "empty range", base: 100000, size: 0, agent: 0, wantErr: "empty"},
		{name: "range wraps", base: 4294967295 - 10, size: 65536, agent: 0, wantErr: "past the largest id"},
		{
			name: "size one", base: 100000, size: 1, agent: 0, keep: u32(1000),
			want: []m{mp(0, 1000, 1)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := MapRange(tt.base, tt.size, tt.agent, tt.keep)
			switch {
			case tt.wantRoot:
				if !errors.Is(err, ErrHostRoot) {
					t.Fatalf("err = %v, want ErrHostRoot", err)
				}
				return
			case tt.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("MapRange (-want +got):\n%s", diff)
			}
			checkMapping(t, got)
		})
	}
}

// checkMapping asserts the invariants every mapping must keep: no host 0,
// no container id or host id used twice.
func checkMapping(t *testing.T, ms []m) {
	t.Helper()
	for i, a := range ms {
		if a.HostID == 0 {
			t.Errorf("mapping %v reaches host 0", a)
		}
		for _, b := range ms[i+1:] {
			if rangesOverlap(a.ContainerID, a.Size, b.ContainerID, b.Size) {
				t.Errorf("container ranges %v and %v overlap", a, b)
			}
			if rangesOverlap(a.HostID, a.Size, b.HostID, b.Size) {
				t.Errorf("host ranges %v and %v overlap", a, b)
			}
		}
	}
}

func TestForSlot(t *testing.T) {
	slot := Slot{UID: 1000000, GID: 2000000, Size: SlotSize}
	got, err := ForSlot(slot, 1000, 1001, &Keep{UID: 1500, GID: 1600})
	if err != nil {
		t.Fatal(err)
	}
	want := Mappings{
		UIDs: []m{mp(0, 1000000, 1000), mp(1000, 1500, 1), mp(1001, 1001001, 64535)},
		GIDs: []m{mp(0, 2000000, 1001), mp(1001, 1600, 1), mp(1002, 2001002, 64534)},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ForSlot (-want +got):\n%s", diff)
	}

	got, err = ForSlot(slot, 1000, 1000, nil)
	if err != nil {
		t.Fatal(err)
	}
	want = Mappings{UIDs: []m{mp(0, 1000000, SlotSize)}, GIDs: []m{mp(0, 2000000, SlotSize)}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ForSlot without keep (-want +got):\n%s", diff)
	}

	_, err = ForSlot(slot, 1000, 1000, &Keep{UID: 1500, GID: 0})
	if !errors.Is(err, ErrHostRoot) || !strings.HasPrefix(err.Error(), "gid mapping") {
		t.Errorf("err = %v, want a gid mapping ErrHostRoot", err)
	}
}
