//go:build integration

package apparmor

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/internal/testutil"
)

// compile runs apparmor_parser on text without loading anything: -Q skips
// the kernel, -K the cache, -o writes the binary policy to a scratch file.
func compile(t *testing.T, parser, text string) ([]byte, error) {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "profile")
	if err := os.WriteFile(src, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return exec.Command(parser, "-QK", "-o", filepath.Join(dir, "out"), src).CombinedOutput()
}

// TestProfileCompiles feeds the rendered profile to the real parser, and a
// broken one as a control that the parser does reject bad input. It needs
// only the apparmor package, not an AppArmor kernel.
func TestProfileCompiles(t *testing.T) {
	parser := testutil.RequireBinary(t, "apparmor_parser", "apparmor")
	text, err := os.ReadFile(RenderedFile)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := compile(t, parser, string(text)); err != nil {
		t.Fatalf("apparmor_parser rejected %s: %v\n%s", RenderedFile, err, out)
	}
	for _, bad := range []string{"frobnicate everything,", "deny /sys/** wq,", "signal (explode) peer=x,"} {
		broken := strings.Replace(string(text), "deny mount,", bad, 1)
		if out, err := compile(t, parser, broken); err == nil {
			t.Fatalf("apparmor_parser accepted the broken rule %q; the compile check proves nothing\n%s", bad, out)
		}
	}
}

// TestLoadIntoKernel checks Load against the kernel the test runs on, with
// no skip either way: where AppArmor is off (as on CI's Debian VM), Load must
// refuse with ErrNotEnabled and load nothing; where it is on, the profile is
// loaded for real (root needed), found loaded, and replaced on a reload.
func TestLoadIntoKernel(t *testing.T) {
	if st := Check("/"); !st.Enabled {
		text, _ := Render(DefaultName)
		err := Load(DefaultName, text)
		if !errors.Is(err, ErrNotEnabled) {
			t.Errorf("Load on a host without AppArmor (%s) = %v, want ErrNotEnabled", st.Reason, err)
		}
		return
	}
	testutil.RequireRoot(t)
	testutil.RequireBinary(t, "apparmor_parser", "apparmor")
	const name = "agentbox-integration-test"
	text, err := Render(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := Load(name, text); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// apparmor_parser -R removes the profile the text declares
		path := filepath.Join(t.TempDir(), "profile")
		if err := os.WriteFile(path, []byte(text), 0o600); err == nil {
			_ = exec.Command("apparmor_parser", "-R", path).Run()
		}
	})
	loaded, err := IsLoaded(name)
	if err != nil || !loaded {
		t.Fatalf("IsLoaded(%s) = %v, %v after Load", name, loaded, err)
	}
	if err := Load(name, text); err != nil { // -r replaces
		t.Errorf("reloading: %v", err)
	}
}
