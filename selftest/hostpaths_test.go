//go:build linux

package selftest

import (
	"os"
	"path/filepath"
	"testing"
)

// IdentifyHostPaths names each path as IdentifyHostPath does, one read of
// the mount table for all, and says of each path that cannot be named why.
func TestIdentifyHostPathsNamesEachAsOne(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing")
	hps, errs := IdentifyHostPaths("/proc", dir, missing, file)
	if len(hps) != 3 || len(errs) != 3 {
		t.Fatalf("%d names and %d errors for 3 paths", len(hps), len(errs))
	}
	if errs[1] == nil {
		t.Errorf("%s named %+v, want an error", missing, hps[1])
	}
	for _, i := range []int{0, 2} {
		p := []string{dir, missing, file}[i]
		one, err := IdentifyHostPath("/proc", p)
		if err != nil || errs[i] != nil {
			t.Fatalf("%s: %v / %v", p, err, errs[i])
		}
		if hps[i] != one || one.Ino == 0 || one.Dev == "" {
			t.Errorf("%s: %+v, alone %+v", p, hps[i], one)
		}
	}
}
