//go:build integration

package main

import (
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentbox/agentbox/internal/testutil"
	"github.com/agentbox/agentbox/selftest"
)

var (
	buildOnce sync.Once
	built     string
	buildErr  error
	buildDir  string
)

func TestMain(m *testing.M) {
	buildDir, _ = os.MkdirTemp("", "agentbox-init-test-")
	code := m.Run()
	os.RemoveAll(buildDir)
	os.Exit(code)
}

// buildInit builds agentbox-init statically, once per test binary.
func buildInit(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() { built, buildErr = build(filepath.Join(buildDir, "agentbox-init")) })
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return built
}

func build(bin string) (string, error) {
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build: %w\n%s", err, out)
	}
	f, err := elf.Open(bin)
	if err != nil {
		return "", err
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return "", errors.New("agentbox-init is dynamically linked")
		}
	}
	return bin, nil
}

// startInit runs bin with the launcher's socketpair end as fd 3.
func startInit(t *testing.T, bin string, cfg selftest.InitConfig) (*selftest.Launcher, *exec.Cmd) {
	t.Helper()
	l, initEnd, err := selftest.NewLauncher()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin)
	cmd.ExtraFiles = []*os.File{initEnd}
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	initEnd.Close()
	t.Cleanup(func() { l.Close(); cmd.Process.Kill(); cmd.Wait() })
	if err := l.Configure(cfg); err != nil {
		t.Fatal(err)
	}
	return l, cmd
}

func exitCode(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	err := cmd.Wait()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode()
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return c
}

func TestInitProtocolLandlockAndExitCode(t *testing.T) {
	testutil.RequireRoot(t)
	bin := buildInit(t)
	secret := filepath.Join(t.TempDir(), "outside")
	os.WriteFile(secret, []byte("x"), 0o644)
	cfg := selftest.InitConfig{
		Version: selftest.ProtocolVersion, RunID: "it-init", WaitGo: true,
		Probes: []string{"environment-is-clean", "gateway-reachable"},
		Agent: selftest.Command{
			Args: []string{"sh", "-c", "cat " + secret + " 2>/dev/null && exit 1; exit 7"},
			Env:  []string{"PATH=/usr/bin:/bin"},
		},
		Landlock: &selftest.LandlockPlan{MinABI: 1, Paths: []selftest.LandlockPath{
			{Path: "/usr"},
			{Path: "/bin"},
			{Path: "/lib"},
			{Path: "/lib64", Optional: true},
			{Path: "/etc"},
			{Path: "/dev", Write: true, IoctlDev: true},
			{Path: "/nonexistent-optional", Optional: true},
		}},
	}
	l, cmd := startInit(t, bin, cfg)
	results, err := l.Results(ctx(t))
	if err != nil || len(results) != 2 {
		t.Fatalf("results: %v %v", results, err)
	}
	for _, r := range results {
		if !r.Passed() || !r.Verify() || r.RunID != "it-init" {
			t.Errorf("%s: %s %s (%s)", r.Probe, r.Decision, r.Observed, r.Detail)
		}
	}
	if err := l.Go(); err != nil {
		t.Fatal(err)
	}
	st, err := l.Started(ctx(t))
	if err != nil || st.PID <= 0 || st.Landlock.ABI != selftest.LandlockABI() || !st.Landlock.FS {
		t.Fatalf("started: %+v %v", st, err)
	}
	if strings.Join(st.Landlock.Skipped, ",") != "/nonexistent-optional" {
		t.Errorf("skipped: %v", st.Landlock.Skipped)
	}
	if code, err := l.Wait(ctx(t)); err != nil || code != 7 {
		t.Errorf("reported exit %d %v, want 7 (1 means Landlock let the agent read outside the plan)", code, err)
	}
	if code := exitCode(t, cmd); code != 7 {
		t.Errorf("init exited %d, want the agent's 7", code)
	}
}

func TestInitForwardsSignals(t *testing.T) {
	testutil.RequireRoot(t)
	bin := buildInit(t)
	l, cmd := startInit(t, bin, selftest.InitConfig{
		Version: selftest.ProtocolVersion, Probes: []string{},
		Agent: selftest.Command{Args: []string{"sleep", "300"}, Env: []string{"PATH=/usr/bin:/bin"}},
	})
	if _, err := l.Results(ctx(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Started(ctx(t)); err != nil {
		t.Fatal(err)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if code, err := l.Wait(ctx(t)); err != nil || code != 128+15 {
		t.Errorf("reported %d %v, want 143", code, err)
	}
	if code := exitCode(t, cmd); code != 143 {
		t.Errorf("init exited %d, want 143", code)
	}
}

func TestInitAbortAndMissingAgent(t *testing.T) {
	testutil.RequireRoot(t)
	bin := buildInit(t)
	l, cmd := startInit(t, bin, selftest.InitConfig{
		Version: selftest.ProtocolVersion, Probes: []string{}, WaitGo: true,
		Agent: selftest.Command{Args: []string{"true"}},
	})
	if _, err := l.Results(ctx(t)); err != nil {
		t.Fatal(err)
	}
	l.Abort("probe failed")
	if code := exitCode(t, cmd); code != selftest.ExitInitFailed {
		t.Errorf("aborted init exited %d", code)
	}
	l, cmd = startInit(t, bin, selftest.InitConfig{
		Version: selftest.ProtocolVersion, Probes: []string{},
		Agent: selftest.Command{Args: []string{"no-such-agent-xyz"}, Env: []string{"PATH=/usr/bin"}},
	})
	l.Results(ctx(t))
	var ie *selftest.InitError
	if _, err := l.Started(ctx(t)); !errors.As(err, &ie) || !strings.Contains(ie.Reason, "not found") {
		t.Errorf("missing agent: %v", err)
	}
	if code := exitCode(t, cmd); code != selftest.ExitNotFound {
		t.Errorf("missing agent: init exited %d", code)
	}
}

func TestProbeMode(t *testing.T) {
	testutil.RequireRoot(t)
	bin := buildInit(t)
	for _, tc := range []struct {
		env  []string
		code int
	}{{[]string{"PATH=/bin"}, 0}, {[]string{"GITHUB_TOKEN=x"}, 1}} {
		cmd := exec.Command(bin, "--probe", "environment-is-clean", "--json")
		cmd.Env, cmd.Stdin = tc.env, strings.NewReader(`{"version":1,"run_id":"pm"}`)
		var out bytes.Buffer
		cmd.Stdout = &out
		cmd.Run()
		if cmd.ProcessState.ExitCode() != tc.code || !strings.Contains(out.String(), `"run_id":"pm"`) {
			t.Errorf("%v: exit %d, output %s", tc.env, cmd.ProcessState.ExitCode(), out.String())
		}
	}
	cmd := exec.Command(bin, "--probe", "nope")
	cmd.Stdin = strings.NewReader("")
	if cmd.Run(); cmd.ProcessState.ExitCode() != 2 {
		t.Errorf("unknown probe: exit %d, want 2", cmd.ProcessState.ExitCode())
	}
}
