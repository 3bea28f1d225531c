package policy_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentbox/agentbox/host"
	"github.com/agentbox/agentbox/policy"
)

// Resolve is pure: on the real file system, for a run whose run root does
// not exist, it creates nothing (not the run root, not the run directory,
// not the gateway's socket, nothing in the workspace) and the same inputs
// give the same plan.
func TestResolveIsPure(t *testing.T) {
	tmp := t.TempDir()
	ws := filepath.Join(tmp, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(tmp, "no-run-root")
	dir := policy.RunDir(root, "R")
	run := policy.Run{ID: "R", Dir: dir, Bundle: filepath.Join(dir, "bundle"), GatewayToken: "agentbox-gw-pure"}
	h := policy.Host{
		EUID: uint32(os.Geteuid()), EGID: uint32(os.Getegid()), Cwd: ws, FS: host.OSFS{},
		Environ: []string{"TERM=xterm"}, InitPath: "/nonexistent/agentbox-init", Homes: []string{"/root"},
		SubIDs: policy.SubIDs{User: "u", UID: policy.IDRange{Start: 200000, Count: 65536}, GID: policy.IDRange{Start: 200000, Count: 65536}, NewIDMap: true},
	}
	p := policy.Policy{Workspace: ws, Runtime: "/bin/true"}
	before := tree(t, tmp)
	first, err := policy.Resolve(p, []string{"/bin/true", "x"}, h, run)
	if err != nil {
		t.Fatal(err)
	}
	second, err := policy.Resolve(p, []string{"/bin/true", "x"}, h, run)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(first, second); d != "" {
		t.Errorf("the same inputs gave another plan (-first +second):\n%s", d)
	}
	if _, err := os.Lstat(root); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the run root exists after planning: %v", err)
	}
	if d := cmp.Diff(before, tree(t, tmp)); d != "" {
		t.Errorf("planning changed the file system (-before +after):\n%s", d)
	}
	if first.GatewaySocket != filepath.Join(dir, "gateway", "gateway.sock") || first.CgroupsPath == "" && h.EUID == 0 {
		t.Errorf("the plan names gateway %q cgroup %q", first.GatewaySocket, first.CgroupsPath)
	}
}

// tree lists every path below dir with its mode.
func tree(t *testing.T, dir string) map[string]fs.FileMode {
	t.Helper()
	out := map[string]fs.FileMode{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		out[p] = fi.Mode()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
