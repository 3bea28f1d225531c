package host

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseHomes(t *testing.T) {
	passwd := `root:x:0:0:root:/root:/bin/bash
daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin
nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin
sshd:x:110:65534::/run/sshd:/usr/sbin/nologin
ana:x:1000:1000:Ana:/home/ana:/bin/bash
svc:x:999:999::/srv/svc:/bin/sh
ana2:x:1001:1001::/home/ana:/bin/sh
broken line
`
	got := ParseHomes(strings.NewReader(passwd))
	want := []string{"/root", "/home/ana", "/srv/svc"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("homes (-want +got):\n%s", d)
	}
}

func TestIsHome(t *testing.T) {
	for h, want := range map[string]bool{"/home/ana": true, "/srv/svc": true, "/": false, "/nonexistent": false, "/usr/sbin": false, "/run/sshd": false, "/var/lib/postgresql": false, "relative": false} {
		if got := isHome(h); got != want {
			t.Errorf("isHome(%q) = %v, want %v", h, got, want)
		}
	}
}

func TestAppArmorEnabledReadsTheModuleParameter(t *testing.T) {
	for value, want := range map[string]bool{"Y\n": true, "N\n": false, "": false} {
		root := t.TempDir()
		dir := filepath.Join(root, "sys/module/apparmor/parameters")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "enabled"), []byte(value), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := AppArmorEnabled(root); got != want {
			t.Errorf("enabled=%q: AppArmorEnabled = %v, want %v", value, got, want)
		}
	}
	if AppArmorEnabled(t.TempDir()) {
		t.Error("a root without the module has no AppArmor")
	}
}
