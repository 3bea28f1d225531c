package userns

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRootlessMappings(t *testing.T) {
	subU := []SubIDEntry{{"bob", 300000, 65536}, {"ana", 100000, 65536}, {"ana", 900000, 65536}}
	subG := []SubIDEntry{{"1000", 200000, 65536}}
	base := RootlessInput{Name: "ana", UID: 1000, GID: 1000, AgentUID: 1000, AgentGID: 1000, NewIDMap: true}
	with := func(f func(*RootlessInput)) RootlessInput { in := base; f(&in); return in }
	singleWant := Mappings{UIDs: []m{mp(1000, 1000, 1)}, GIDs: []m{mp(1000, 1000, 1)}}

	tests := []struct {
		name       string
		in         RootlessInput
		want       Mappings
		mode       RootlessMode
		reasonHas  string
		wantErrIs  error
		wantErrHas string
	}{
		{
			name: "subids and newidmap",
			in:   with(func(in *RootlessInput) { in.SubUIDs, in.SubGIDs = subU, subG }),
			want: Mappings{
				UIDs: []m{mp(0, 100000, 1000), mp(1000, 1000, 1), mp(1001, 101001, 64535)},
				GIDs: []m{mp(0, 200000, 1000), mp(1000, 1000, 1), mp(1001, 201001, 64535)},
			},
			mode: RootlessSubIDs,
		},
		{
			name:      "no subids",
			in:        base,
			want:      singleWant,
			mode:      RootlessSingle,
			reasonHas: "no entry in /etc/subuid",
		},
		{
			name:      "subuid without subgid",
			in:        with(func(in *RootlessInput) { in.SubUIDs = subU }),
			want:      singleWant,
			mode:      RootlessSingle,
			reasonHas: "usermod --add-subuids",
		},
		{
			name:      "other users' subids only",
			in:        with(func(in *RootlessInput) { in.SubUIDs, in.SubGIDs = subU[:1], subU[:1] }),
			want:      singleWant,
			mode:      RootlessSingle,
			reasonHas: "no entry",
		},
		{
			name:      "no newuidmap",
			in:        with(func(in *RootlessInput) { in.SubUIDs, in.SubGIDs, in.NewIDMap = subU, subG, false }),
			want:      singleWant,
			mode:      RootlessSingle,
			reasonHas: "apt-get install uidmap",
		},
		{
			name: "agent id differs from the user's",
			in: with(func(in *RootlessInput) {
				in.AgentUID, in.AgentGID = 0, 0
			}),
			want:      Mappings{UIDs: []m{mp(0, 1000, 1)}, GIDs: []m{mp(0, 1000, 1)}},
			mode:      RootlessSingle,
			reasonHas: "no entry",
		},
		{
			name:      "root is not rootless",
			in:        with(func(in *RootlessInput) { in.UID, in.GID = 0, 0 }),
			wantErrIs: ErrHostRoot,
		},
		{
			name: "user's own uid inside its subuid range",
			in: with(func(in *RootlessInput) {
				in.SubUIDs, in.SubGIDs = []SubIDEntry{{"ana", 500, 65536}}, subG
			}),
			wantErrHas: "inside the slot",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := RootlessMappings(tt.in)
			if tt.wantErrIs != nil || tt.wantErrHas != "" {
				if tt.wantErrIs != nil && !errors.Is(err, tt.wantErrIs) {
					t.Fatalf("err = %v, want %v", err, tt.wantErrIs)
				}
				if err == nil || !strings.Contains(err.Error(), tt.wantErrHas) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErrHas)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got.Mappings); diff != "" {
				t.Errorf("mappings (-want +got):\n%s", diff)
			}
			if got.Mode != tt.mode {
				t.Errorf("Mode = %q, want %q", got.Mode, tt.mode)
			}
			if (tt.reasonHas == "") != (got.Reason == "") || !strings.Contains(got.Reason, tt.reasonHas) {
				t.Errorf("Reason = %q, want it to contain %q", got.Reason, tt.reasonHas)
			}
		})
	}
}

func TestCurrentRootless(t *testing.T) {
	etc := t.TempDir()
	uid := strconv.Itoa(os.Getuid())
	for _, f := range []string{"subuid", "subgid"} {
		if err := os.WriteFile(filepath.Join(etc, f), []byte(uid+":300000:65536\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r, err := CurrentRootless(etc, 1000, 1000)
	if os.Getuid() == 0 {
		if !errors.Is(err, ErrHostRoot) {
			t.Errorf("as root: err = %v, want ErrHostRoot", err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	wantMode := RootlessSingle
	if HaveNewIDMap() {
		wantMode = RootlessSubIDs
	}
	if r.Mode != wantMode {
		t.Errorf("Mode = %s (%s), want %s", r.Mode, r.Reason, wantMode)
	}
	own := mp(1000, uint32(os.Getuid()), 1)
	if !slices.Contains(r.UIDs, own) {
		t.Errorf("UIDs %v lack the agent -> own uid mapping %v", r.UIDs, own)
	}
}

func TestCurrentRootlessBadFile(t *testing.T) {
	etc := t.TempDir()
	if err := os.WriteFile(filepath.Join(etc, "subgid"), []byte("x:y\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := CurrentRootless(etc, 1000, 1000)
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line != 1 {
		t.Errorf("err = %v, want a ParseError on line 1", err)
	}
}
