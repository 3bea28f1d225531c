package launcher

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// agentbox-ext is accepted beside agentbox only when nobody but its
// owners could have written it or a directory above it.
func TestCheckHelper(t *testing.T) {
	me := uint32(os.Geteuid())
	mk := func(t *testing.T, dirMode, fileMode os.FileMode) string {
		t.Helper()
		dir := filepath.Join(t.TempDir(), "bin")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, HelperName)
		if fileMode != 0 {
			if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(p, fileMode); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Chmod(dir, dirMode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name              string
		dirMode, fileMode os.FileMode
		owners            []uint32
		refuse            string // "" accepts
	}{
		{name: "installed", dirMode: 0o755, fileMode: 0o755, owners: []uint32{0, me}},
		{name: "sticky directory", dirMode: 0o777 | os.ModeSticky, fileMode: 0o755, owners: []uint32{0, me}},
		{name: "missing", dirMode: 0o755, owners: []uint32{0, me}, refuse: "is not installed beside agentbox"},
		{name: "not executable", dirMode: 0o755, fileMode: 0o644, owners: []uint32{0, me}, refuse: "not an executable file"},
		{name: "group-writable file", dirMode: 0o755, fileMode: 0o775, owners: []uint32{0, me}, refuse: "writable by group or others"},
		{name: "world-writable directory", dirMode: 0o777, fileMode: 0o755, owners: []uint32{0, me}, refuse: "writable by group or others"},
		{name: "someone else's", dirMode: 0o755, fileMode: 0o755, owners: []uint32{me + 1}, refuse: "owned by uid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := mk(t, tc.dirMode, tc.fileMode)
			err := checkHelper(p, tc.owners)
			switch {
			case tc.refuse == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.refuse != "" && (err == nil || !strings.Contains(err.Error(), tc.refuse)):
				t.Errorf("got %v, want a refusal saying %q", err, tc.refuse)
			}
		})
	}
}
