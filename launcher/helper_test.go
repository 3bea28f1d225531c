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

// audit, compose and kube go to agentbox-ext; whatever else agentbox hands
// over (a command on the containerd engine) goes to agentbox-containerd,
// and a missing one says what it holds.
func TestHelperFor(t *testing.T) {
	for cmd := range HelperCommands {
		if got := HelperFor(cmd); got != HelperName {
			t.Errorf("%s goes to %s, want %s", cmd, got, HelperName)
		}
	}
	for _, cmd := range []string{"run", "selftest", "spec", "doctor", "gc"} {
		if got := HelperFor(cmd); got != ContainerdHelperName {
			t.Errorf("%s goes to %s, want %s", cmd, got, ContainerdHelperName)
		}
	}
	err := checkHelper(filepath.Join(t.TempDir(), ContainerdHelperName), []uint32{0, uint32(os.Geteuid())})
	if err == nil || !strings.Contains(err.Error(), "agentbox-containerd is not installed beside agentbox") || !strings.Contains(err.Error(), "--engine containerd") {
		t.Errorf("a missing agentbox-containerd: %v, want it named with the engine it holds", err)
	}
	if _, err := FindHelper("agentbox-nonesuch"); err == nil {
		t.Error("FindHelper looked for a program that is not one of agentbox's helpers")
	}
}
