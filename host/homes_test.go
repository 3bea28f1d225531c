package host

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestHomes(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	link := filepath.Join(dir, "link")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	passwd := filepath.Join(dir, "passwd")
	write(t, passwd, `root:x:0:0:root:/root:/bin/bash
daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin
nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin
sshd:x:110:65534::/run/sshd:/usr/sbin/nologin
postgres:x:105:111::/var/lib/postgresql:/bin/bash
systemd-network:x:998:998::/:/usr/sbin/nologin
ana:x:1000:1000:Ana:/home/ana:/bin/bash
git:x:999:999::/srv/git:/bin/sh
corp:x:200000:200000::/home/corp/:/bin/sh
early:x:500:500::/home/early:/bin/sh
linked:x:1002:1002::`+link+`:/bin/sh
ana2:x:1001:1001::/home/ana:/bin/sh
#old:x:1003:1003::/home/old:/bin/sh
+@admins
broken line
rel:x:1004:1004::home/rel:/bin/sh
`)
	got := Homes(passwd, "/var/lib/jenkins")
	want := []string{
		"/root",
		"/var/lib/jenkins", // the invoking user's, even in a system directory
		"/home/ana",
		"/srv/git",    // a service account below uid 1000
		"/home/corp",  // a directory user above 65533, cleaned
		"/home/early", // a distribution that starts people at 500
		real,          // resolved through the symlink
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("homes (-want +got):\n%s", d)
	}
}

func TestHomesWithoutPasswd(t *testing.T) {
	got := Homes(filepath.Join(t.TempDir(), "passwd"), "/home/me")
	if d := cmp.Diff([]string{"/root", "/home/me"}, got); d != "" {
		t.Errorf("homes (-want +got):\n%s", d)
	}
	for _, home := range []string{"", "/", "relative", "/nonexistent", "/root"} {
		if got := Homes("/no/such/passwd", home); !cmp.Equal(got, []string{"/root"}) {
			t.Errorf("home %q: %v, want just /root", home, got)
		}
	}
}

func TestIsHome(t *testing.T) {
	for h, want := range map[string]bool{
		"/home/ana": true, "/srv/svc": true, "/opt/app": true, "/home/ana/": true, "/root": true,
		"/": false, "": false, "/nonexistent": false, "/usr/sbin": false, "/run/sshd": false,
		"/var/lib/postgresql": false, "/bin": false, "/boot/x": false, "relative": false,
	} {
		if got := isHome(h); got != want {
			t.Errorf("isHome(%q) = %v, want %v", h, got, want)
		}
	}
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
