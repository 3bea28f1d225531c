package launcher

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentbox/agentbox/selftest"
)

// starterUnderTest runs the starter's protocol against a launcher end, as
// the macOS engine would, with a fake probe child and exec.
func starterUnderTest(t *testing.T, probeOut string, execd *[]string) (*selftest.Launcher, <-chan int) {
	t.Helper()
	lc, end, err := selftest.NewLauncher()
	if err != nil {
		t.Fatal(err)
	}
	conn, err := selftest.NewConn(end)
	end.Close()
	if err != nil {
		t.Fatal(err)
	}
	sys := starterSys{
		probe: func(selftest.InitConfig) (io.ReadCloser, func() error, error) {
			return io.NopCloser(strings.NewReader(probeOut)), func() error { return nil }, nil
		},
		exec: func(path string, args, env []string, dir string) error {
			*execd = append(append(*execd, path, dir), args...)
			return errors.New("fake exec")
		},
		watch: func() error { *execd = append(*execd, "watchdog"); return nil },
		pid:   4242,
	}
	code := make(chan int, 1)
	go func() { code <- runStarter(conn, io.Discard, sys) }()
	t.Cleanup(func() { lc.Close() })
	return lc, code
}

func starterConfig(t *testing.T, args ...string) selftest.InitConfig {
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "agent"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return selftest.InitConfig{
		Version: selftest.ProtocolVersion, RunID: "r1", WaitGo: true,
		Probes: []string{"environment-is-clean", "gateway-reachable"},
		Agent:  selftest.Command{Args: args, Env: []string{"PATH=/nonexistent:" + bin, "HOME=/h"}, Dir: "/ws"},
	}
}

func TestStarterRelaysTheProbesThenExecutesTheAgent(t *testing.T) {
	cfg := starterConfig(t, "agent", "--print", "hi")
	var out bytes.Buffer
	if _, err := selftest.WriteResults(context.Background(), &out, &selftest.Env{Config: &selftest.InitConfig{Version: selftest.ProtocolVersion, RunID: "r1", Probes: []string{"environment-is-clean"}}, Proc: "/proc", Environ: cfg.Agent.Env}); err != nil {
		t.Fatal(err)
	}
	var execd []string
	lc, code := starterUnderTest(t, "garbage\n"+out.String(), &execd)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := lc.Configure(cfg); err != nil {
		t.Fatal(err)
	}
	results, err := lc.Results(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]selftest.Decision{}
	for _, r := range results {
		got[r.Probe] = r.Decision
	}
	// The child reported one probe; the other is UNKNOWN, never missing.
	if len(results) != 2 || got["gateway-reachable"] != selftest.Unknown || got["environment-is-clean"] == "" {
		t.Errorf("results = %+v", results)
	}
	if lc.AgentPID() != 4242 {
		t.Errorf("agent-to-be pid = %d, want the starter's own", lc.AgentPID())
	}
	if len(execd) != 0 {
		t.Fatal("the agent ran before the go")
	}
	if err := lc.Go(); err != nil {
		t.Fatal(err)
	}
	if _, err := lc.Started(ctx); err != nil {
		t.Fatal(err)
	}
	if c := <-code; c != selftest.ExitCannotExec {
		t.Errorf("exit after a failed exec = %d, want %d", c, selftest.ExitCannotExec)
	}
	bin := strings.TrimPrefix(cfg.Agent.Env[0], "PATH=/nonexistent:")
	if want := []string{"watchdog", filepath.Join(bin, "agent"), "/ws", "agent", "--print", "hi"}; !slices.Equal(execd, want) {
		t.Errorf("exec %q, want %q (found on the agent's PATH)", execd, want)
	}
}

func TestStarterAbortStartsNothing(t *testing.T) {
	var execd []string
	lc, code := starterUnderTest(t, "", &execd)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := lc.Configure(starterConfig(t, "agent")); err != nil {
		t.Fatal(err)
	}
	if _, err := lc.Results(ctx); err != nil {
		t.Fatal(err)
	}
	if err := lc.Abort("2 probe(s) failed"); err != nil {
		t.Fatal(err)
	}
	if c := <-code; c != selftest.ExitInitFailed || len(execd) != 0 {
		t.Errorf("abort: exit %d, exec %q; want %d and nothing run", c, execd, selftest.ExitInitFailed)
	}
}

func TestStarterMissingAgentIs127(t *testing.T) {
	var execd []string
	lc, code := starterUnderTest(t, "", &execd)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := lc.Configure(starterConfig(t, "no-such-agent")); err != nil {
		t.Fatal(err)
	}
	if _, err := lc.Results(ctx); err != nil {
		t.Fatal(err)
	}
	_ = lc.Go()
	if _, err := lc.Started(ctx); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("Started = %v, want init's error naming the missing agent", err)
	}
	if c := <-code; c != selftest.ExitNotFound || len(execd) != 0 {
		t.Errorf("exit %d, exec %q; want 127 and nothing run", c, execd)
	}
}

// TestStarterProbeChild runs the probe child's side for real: the config
// on stdin, JSON results on stdout, read back by the shared relay.
func TestStarterProbeChild(t *testing.T) {
	in := `{"version":` + strconv.Itoa(selftest.ProtocolVersion) + `,"run_id":"r1","probes":["environment-is-clean"]}`
	var out, errb bytes.Buffer
	code := StarterMain([]string{"--probe"}, strings.NewReader(in), &out, &errb)
	if code > 1 {
		t.Fatalf("probe child exit %d: %s", code, errb.String())
	}
	seen := map[string]bool{}
	if err := selftest.ReadResults(&out, seen, func(selftest.Result) error { return nil }); err != nil || !seen["environment-is-clean"] {
		t.Errorf("probe child printed %q (%v)", out.String(), err)
	}
	if c := StarterMain([]string{"--probe"}, strings.NewReader(`{"nope":1}`), io.Discard, io.Discard); c != 2 {
		t.Errorf("bad config: exit %d, want 2", c)
	}
	if c := StarterMain([]string{"extra"}, nil, io.Discard, io.Discard); c != 2 {
		t.Errorf("extra argument: exit %d, want 2", c)
	}
}

func TestLookPathIn(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "tool")
	if err := os.WriteFile(exe, []byte("x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "plain"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if p, err := lookPathIn("tool", "/nonexistent:"+dir); err != nil || p != exe {
		t.Errorf("lookPathIn(tool) = %q, %v", p, err)
	}
	if _, err := lookPathIn("plain", dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a file without x bits was found: %v", err)
	}
	if p, err := lookPathIn(exe, ""); err != nil || p != exe {
		t.Errorf("a path with a slash = %q, %v", p, err)
	}
	if envValue([]string{"PATH=/a", "X=1", "PATH=/b"}, "PATH") != "/b" || envValue(nil, "PATH") != "" {
		t.Error("envValue does not take the last PATH")
	}
}

// TestStarterWatchdogKillsWhenTheLauncherGoes: the watchdog ends the
// account's processes once the launcher's end of the socket closes, and
// not before.
func TestStarterWatchdogKillsWhenTheLauncherGoes(t *testing.T) {
	lc, end, err := selftest.NewLauncher()
	if err != nil {
		t.Fatal(err)
	}
	defer end.Close()
	killed := make(chan struct{})
	go watchChannel(end, func() { close(killed) })
	select {
	case <-killed:
		t.Fatal("killed while the launcher holds its end")
	case <-time.After(100 * time.Millisecond):
	}
	lc.Close()
	select {
	case <-killed:
	case <-time.After(5 * time.Second):
		t.Fatal("no kill after the launcher's end closed")
	}
}
