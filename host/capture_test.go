package host

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentbox/agentbox/apparmor"
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

// The review's misplan: the module parameter said Y but securityfs was not
// mounted, host facts said AppArmor, and run failed loading the profile
// while doctor reported Landlock. Detection is apparmor.Check's, for both.
func TestAppArmorNeedsSecurityfs(t *testing.T) {
	if st := apparmor.Check("../apparmor/testdata/hosts/no-securityfs"); st.Enabled {
		t.Errorf("no securityfs: %+v, want AppArmor disabled", st)
	}
}
