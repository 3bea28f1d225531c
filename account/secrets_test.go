package account

import (
	"os"
	"path/filepath"
	"testing"
)

// Secrets finds the planner's credential entries (directories and files)
// as well as its own file patterns, and leaves public keys and ordinary
// files out.
func TestSecrets(t *testing.T) {
	home := t.TempDir()
	for _, d := range []string{".ssh", ".config/gh", ".claude", ".gemini", ".config/nvim"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{".ssh/id_ed25519", ".ssh/id_ed25519.pub", ".netrc", ".vault-token", ".config/gh/hosts.yml", ".bashrc", "proj.env"} {
		if err := os.WriteFile(filepath.Join(home, f), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	got := map[string]bool{}
	for _, s := range Secrets(home) {
		rel, _ := filepath.Rel(home, s.Path)
		if got[rel] {
			t.Errorf("%s listed twice", rel)
		}
		got[rel] = s.Dir
	}
	want := map[string]bool{
		".ssh": true, ".ssh/id_ed25519": false, ".config/gh": true, ".config/gh/hosts.yml": false,
		".claude": true, ".gemini": true, ".netrc": false, ".vault-token": false, "proj.env": false,
	}
	for rel, dir := range want {
		if d, ok := got[rel]; !ok || d != dir {
			t.Errorf("%s: found %v, dir %v; want dir %v", rel, ok, d, dir)
		}
	}
	for _, rel := range []string{".ssh/id_ed25519.pub", ".bashrc", ".config/nvim"} {
		if _, ok := got[rel]; ok {
			t.Errorf("%s is not a secret", rel)
		}
	}
}
