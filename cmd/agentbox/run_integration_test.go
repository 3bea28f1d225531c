//go:build integration && linux

package main

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/agentbox/agentbox/internal/testutil"
)

// probeScript observes the boundary from inside, as the agent would, and
// prints one key=value line per observation.
const probeScript = `
for f in CapEff CapPrm CapBnd CapAmb NoNewPrivs Seccomp; do
  echo "$f=$(awk -v k="$f:" '$1==k {print $2}' /proc/self/status)"
done
echo "uid=$(id -u)"
echo "uid_map=$(awk '{printf "%s:%s:%s;", $1, $2, $3}' /proc/self/uid_map)"
touch /agentbox-probe 2>/dev/null && echo "root_writable=yes" || echo "root_writable=no"
touch /etc/agentbox-probe 2>/dev/null && echo "etc_writable=yes" || echo "etc_writable=no"
cat "$CANARY_FILE" >/dev/null 2>&1 && echo "canary_file=visible" || echo "canary_file=invisible"
ls -d "$(dirname "$CANARY_FILE")" >/dev/null 2>&1 && echo "canary_dir=visible" || echo "canary_dir=invisible"
echo "canary_env=${AGENTBOX_CANARY_SECRET:-absent}"
mount -t tmpfs none /tmp 2>/dev/null && echo "mount=allowed" || echo "mount=denied"
unshare -U true 2>/dev/null && echo "unshare=allowed" || echo "unshare=denied"
echo "netdevs=$(ls /sys/class/net | tr '\n' ' ')"
echo "proc_netdevs=$(awk -F: 'NR > 2 {gsub(/ /, "", $1); printf "%s ", $1}' /proc/net/dev)"
echo written > "$PWD/written-by-agent" && echo "ws_write=ok" || echo "ws_write=failed"
exit 7
`

func randomHex(t *testing.T) string {
	t.Helper()
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// plantHomeCanary writes a random canary into the invoking user's real home
// and returns its path.
func plantHomeCanary(t *testing.T) string {
	t.Helper()
	home, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(home, ".agentbox-canary-"+randomHex(t)[:8])
	if err := os.WriteFile(p, []byte(randomHex(t)), 0o644); err != nil {
		t.Fatalf("plant canary in %s: %v", home, err)
	}
	t.Cleanup(func() { os.Remove(p) })
	return p
}

func TestRunBoundary(t *testing.T) { testBoundary(t, "runc") }

// crun runs the same boundary (as root: on a hybrid cgroup host agentbox
// hides the v2 hierarchy from crun, which only root can do).
func TestCrunBoundaryAsRoot(t *testing.T) {
	testutil.RequireRoot(t)
	testutil.RequireBinary(t, "crun", "crun")
	testBoundary(t, "crun")
}

func testBoundary(t *testing.T, runtime string) {
	uid, gid := testUser(t)
	ws := workspaceOwnedBy(t, uid, gid)
	canary := plantHomeCanary(t)
	env := isolatedEnv(t, "AGENTBOX_CANARY_SECRET="+randomHex(t))
	// The canary's path reaches the sandbox only as an argument, never the
	// secret itself; the variable must not cross.
	r := runIn(t, env, ws, "run", "--runtime", runtime, "--", "env", "CANARY_FILE="+canary, "sh", "-c", probeScript)
	if r.code != 7 {
		t.Fatalf("exit code %d, want the agent's 7\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	obs := observations(r.stdout)
	want := map[string]string{
		"CapEff": "0000000000000000", "CapPrm": "0000000000000000", "CapBnd": "0000000000000000", "CapAmb": "0000000000000000",
		"NoNewPrivs": "1", "Seccomp": "2",
		"root_writable": "no", "etc_writable": "no",
		"canary_file": "invisible", "canary_dir": "invisible", "canary_env": "absent",
		"mount": "denied", "unshare": "denied", "netdevs": "lo", "proc_netdevs": "lo", "ws_write": "ok",
	}
	gvisor := filepath.Base(runtime) == "runsc"
	if gvisor {
		want["netdevs"] = "" // the Sentry's sysfs has no /sys/class/net; its network stack lists lo alone in /proc/net/dev
	}
	for k, v := range want {
		if obs[k] != v {
			t.Errorf("%s = %q, want %q", k, obs[k], v)
		}
	}
	if m := obs["uid_map"]; gvisor && m != "0:0:4294967295;" {
		// The Sentry's own user namespace, identity inside; the map that
		// bounds the agent is the Sentry process's on the host
		// (host-uid-map, TestGvisorSelfTestAsRoot), and the file's owner
		// below shows the agent's ids mapped to the workspace owner's.
		t.Errorf("uid_map %q under gVisor: want the Sentry's identity map", m)
	} else if !gvisor && (m == "" || strings.HasPrefix(m, "0:0:4294967295")) {
		t.Errorf("uid_map %q: want a non-identity map", m)
	}
	// As root the map inside is in host ids and must not reach host root.
	// Rootless, it is relative to the runtime's user namespace, where 0 is
	// the invoking user; the host-side verification covers that case.
	if os.Geteuid() == 0 && !gvisor && strings.Contains(obs["uid_map"], ":0:") {
		t.Errorf("uid_map %q maps a container id to host root", obs["uid_map"])
	}
	var st syscall.Stat_t
	if err := syscall.Stat(filepath.Join(ws, "written-by-agent"), &st); err != nil {
		t.Fatal(err)
	}
	if int(st.Uid) != uid || int(st.Gid) != gid {
		t.Errorf("file written by the agent is owned by %d:%d on the host, want the workspace owner %d:%d", st.Uid, st.Gid, uid, gid)
	}
}

func TestExitCodesPassThrough(t *testing.T) {
	uid, gid := testUser(t)
	ws := workspaceOwnedBy(t, uid, gid)
	env := isolatedEnv(t)
	// The shell that dies of a signal is a child: the sandbox's pid 1 cannot
	// be killed from inside its own namespace.
	for script, want := range map[string]int{"exit 0": 0, "exit 42": 42, "sh -c 'kill -9 $$'": 137, "sh -c 'kill -TERM $$'": 143} {
		if r := runIn(t, env, ws, "run", "--", "sh", "-c", script); r.code != want {
			t.Errorf("%q: exit %d, want %d (stderr: %s)", script, r.code, want, r.stderr)
		}
	}
}

// A root-owned workspace is never handed to host root: the agent maps to an
// unprivileged host uid, is granted the tree for the run, and afterwards
// the tree is the owner's again with no ACL left.
func TestRootOwnedWorkspaceIsGrantedAndRestoredAsRoot(t *testing.T) {
	testutil.RequireRoot(t) // scripts/test-rootless.sh leaves *AsRoot tests out
	ws := workspaceOwnedBy(t, 0, 0)
	if err := os.WriteFile(filepath.Join(ws, "existing"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := isolatedEnv(t)
	r := runIn(t, env, ws, "run", "--", "sh", "-c", "echo new > new && echo more >> existing && mkdir -p d/e && echo x > d/e/f && id -u")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	_ = filepath.Walk(ws, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			t.Error(err)
			return nil
		}
		st := fi.Sys().(*syscall.Stat_t)
		if st.Uid != 0 || st.Gid != 0 {
			t.Errorf("%s owned by %d:%d after the run, want root's", p, st.Uid, st.Gid)
		}
		for _, attr := range []string{"system.posix_acl_access", "system.posix_acl_default"} {
			if n, err := syscall.Getxattr(p, attr, nil); err == nil && n > 0 {
				t.Errorf("%s still carries %s", p, attr)
			}
		}
		return nil
	})
	if fi, err := os.Stat(filepath.Join(ws, "existing")); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("existing file mode %v, want 0644 restored", fi.Mode())
	}
}
