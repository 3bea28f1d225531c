//go:build integration && linux

package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/internal/testutil"
)

// agentboxBin is the binary under test: $AGENTBOX_BIN when the caller built
// it (the rootless suite does), else built once here, with agentbox-ext
// and agentbox-containerd beside it. launchertestBin, the
// test-only launcher that pauses at a named step, sits beside it.
var agentboxBin, launchertestBin string

// helperEnv names the helper a copy of this test binary runs instead of
// the tests (inside a sandbox, say): the helpers are processes, never
// tests that pass when there is nothing for them to do.
const (
	helperEnv         = "AGENTBOX_TEST_HELPER"
	helperUnixConnect = "unix-connect"
)

func TestMain(m *testing.M) {
	switch h := os.Getenv(helperEnv); h {
	case "":
	case helperUnixConnect:
		if len(os.Args) != 2 {
			fmt.Fprintf(os.Stderr, "%s=%s takes one argument, a socket path\n", helperEnv, h)
			os.Exit(2)
		}
		os.Exit(unixConnect(os.Args[1]))
	case helperSyscalls:
		os.Exit(trySyscalls(os.Args[1:]))
	default:
		fmt.Fprintf(os.Stderr, "%s=%s: no such helper\n", helperEnv, h)
		os.Exit(2)
	}
	code, err := testMain(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	os.Exit(code)
}

func testMain(m *testing.M) (int, error) {
	if bin := os.Getenv("AGENTBOX_BIN"); bin != "" {
		agentboxBin, launchertestBin = bin, filepath.Join(filepath.Dir(bin), "launchertest")
		return m.Run(), nil
	}
	dir, err := os.MkdirTemp("", "agentbox-it-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o755); err != nil {
		return 0, err
	}
	agentboxBin, launchertestBin = filepath.Join(dir, "agentbox"), filepath.Join(dir, "launchertest")
	for out, pkg := range map[string]string{
		agentboxBin: ".", filepath.Join(dir, "agentbox-ext"): "-tags=agentbox_ext .", // the launch binary and its helpers
		filepath.Join(dir, "agentbox-containerd"): "-tags=agentbox_containerd .", filepath.Join(dir, "agentbox-init"): "../agentbox-init",
		launchertestBin: "../../launcher/internal/launchertest",
	} {
		build := exec.Command("go", append([]string{"build", "-o", out}, strings.Fields(pkg)...)...)
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if msg, err := build.CombinedOutput(); err != nil {
			return 0, fmt.Errorf("build %s: %w\n%s", pkg, err, msg)
		}
	}
	return m.Run(), nil
}

// result is one finished agentbox invocation.
type result struct {
	stdout, stderr string
	code           int
}

// env returns a launcher environment with private state and run roots, so
// that tests never touch the machine's real ledger or each other's runs.
func isolatedEnv(t *testing.T, extra ...string) []string {
	t.Helper()
	state, config := t.TempDir(), t.TempDir()
	run, err := os.MkdirTemp("", "abr-") // short: unix socket paths live under it
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(run) })
	env := []string{
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=" + os.Getenv("HOME"), "TERM=dumb", "LANG=C.UTF-8",
		"AGENTBOX_STATE_DIR=" + state, "AGENTBOX_RUN_ROOT=" + run, "AGENTBOX_CONFIG_DIR=" + config,
	}
	if doc := testEnginePolicy(t); doc != "" {
		if err := os.WriteFile(filepath.Join(config, "policy.yaml"), []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return append(env, extra...)
}

// The suite runs on the host's default engine and runtime unless
// AGENTBOX_TEST_ENGINE (runtime, containerd) or AGENTBOX_TEST_RUNTIME
// (runc, crun, runsc) names another: isolatedEnv then writes them into the
// user's own policy file of the test's configuration directory, so that
// every launch of the test takes them, the ones started through script(1)
// and launchertest included; a flag a test passes still wins. `make test`
// runs the whole root suite this way on runc, on containerd, and on
// containerd with runc (Makefile, CONTAINERD_SKIP).
const (
	testEngineEnv  = "AGENTBOX_TEST_ENGINE"
	testRuntimeEnv = "AGENTBOX_TEST_RUNTIME"
)

// testEnginePolicy is the policy file those variables ask for ("" for
// none); an engine it cannot reach fails the test, or skips it outside
// strict mode.
func testEnginePolicy(t *testing.T) string {
	t.Helper()
	doc := ""
	if rt := os.Getenv(testRuntimeEnv); rt != "" {
		doc += "runtime: " + testRuntimePath(t, rt) + "\n"
	}
	switch e := os.Getenv(testEngineEnv); e {
	case "", "runtime":
	case "containerd":
		addr, _ := testContainerd(t)
		doc += "engine: containerd\naddress: " + addr + "\n"
	default:
		t.Fatalf("%s=%q: use runtime or containerd", testEngineEnv, e)
	}
	return doc
}

// onContainerd reports whether the suite runs on containerd
// (AGENTBOX_TEST_ENGINE=containerd).
func onContainerd() bool { return os.Getenv(testEngineEnv) == "containerd" }

func runIn(t *testing.T, env []string, dir string, args ...string) result {
	t.Helper()
	cmd := exec.Command(agentboxBin, args...)
	cmd.Env, cmd.Dir = env, dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run agentbox: %v", err)
	}
	return result{out.String(), errb.String(), code}
}

// envValue finds KEY=value in env.
func envValue(env []string, key string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, key+"="); ok {
			return v
		}
	}
	return ""
}

// testUser is the unprivileged user that scripts/test-setup.sh creates.
func testUser(t *testing.T) (uid, gid int) {
	t.Helper()
	u, err := user.Lookup("agentbox-test")
	if err != nil {
		testutil.Skip(t, "user agentbox-test missing (scripts/test-setup.sh creates it)")
	}
	uid, _ = strconv.Atoi(u.Uid)
	gid, _ = strconv.Atoi(u.Gid)
	return uid, gid
}

// workspaceOwnedBy makes a workspace directory owned by uid:gid.
func workspaceOwnedBy(t *testing.T, uid, gid int) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "agentbox-ws-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// shortTempDir makes a 0755 directory under the system's temporary
// directory: short, since unix socket paths live below it, and searchable
// by the sandbox's mapped ids.
func shortTempDir(t *testing.T, prefix string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// observations parses key=value lines printed by a probe script.
func observations(out string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			m[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return m
}
