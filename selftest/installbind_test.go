package selftest

import "testing"

// host-home-not-mounted accepts a part of the home only where the plan
// bound an install, and only read-only.
func TestInstallBind(t *testing.T) {
	mounts := []Mount{
		{MountPoint: "/home/ana/.nvm/versions/node/v22", Options: "ro,nosuid"},
		{MountPoint: "/home/ana/.local/bin", Options: "rw,nosuid"},
		{MountPoint: "/home/ana/src", Options: "ro"},
	}
	installs := []string{"/home/ana/.nvm/versions/node/v22", "/home/ana/.local/bin"}
	for p, want := range map[string]bool{
		"/home/ana/.nvm/versions/node/v22": true,
		"/home/ana/.local/bin":             false, // writable
		"/home/ana/src":                    false, // not an install
	} {
		if got := installBind(mounts, p, installs); got != want {
			t.Errorf("installBind(%s) = %v, want %v", p, got, want)
		}
	}
}
