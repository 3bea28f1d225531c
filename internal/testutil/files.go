package testutil

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/agentbox/agentbox/seccomp/profiles"
)

// SeccompProfile writes agentbox's seccomp profile for this machine's
// architecture into the test's temporary directory and returns its path.
func SeccompProfile(t *testing.T) string {
	t.Helper()
	arch, err := profiles.ArchForGOARCH(runtime.GOARCH)
	if err != nil {
		t.Fatal(err)
	}
	b, err := profiles.Default().JSON(arch)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "agentbox-seccomp.json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// FakeHome makes a home directory with an .ssh key inside the test's
// temporary directory, never the real user's.
func FakeHome(t *testing.T) string {
	t.Helper()
	home := filepath.Join(t.TempDir(), "home", "ana")
	if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".ssh", "id_ed25519"), []byte("not a key\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return home
}
