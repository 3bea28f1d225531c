//go:build integration && linux

package selftest

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/agentbox/agentbox/internal/testutil"
)

// world is what a test plants for the probes: a fake home with a canary
// file, canaries on the host's loopback and abstract namespace, a fake
// engine socket, a loopback "outside" host and DNS responder, and a process
// to trace. Everything lives on this machine's loopback.
type world struct {
	cfg     InitConfig
	environ []string
}

func plant(t *testing.T) *world {
	t.Helper()
	dir := t.TempDir()
	os.Chmod(dir, 0o700)
	home := filepath.Join(dir, "home")
	os.Mkdir(home, 0o700)
	secret := []byte("canary-" + t.Name())
	canary := filepath.Join(home, "canary")
	if err := os.WriteFile(canary, secret, 0o600); err != nil {
		t.Fatal(err)
	}
	homeID, err := IdentifyHostPath("/proc", home)
	if err != nil {
		t.Fatal(err)
	}
	canaryID, _ := IdentifyHostPath("/proc", canary)
	token := []byte("token-" + t.Name())
	tcp := serve(t, "tcp4", "127.0.0.1:0", token)
	abstract := serve(t, "unix", "@agentbox-test-"+filepath.Base(dir), token)
	outside := serve(t, "tcp4", "127.0.0.1:0", nil)
	sock := filepath.Join(dir, "docker.sock")
	serve(t, "unix", sock, nil)
	wsSock := filepath.Join(dir, "nvim.sock")
	serve(t, "unix", wsSock, token)
	sleeper := exec.Command("sleep", "300")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sleeper.Process.Kill(); sleeper.Wait() })
	return &world{
		cfg: InitConfig{
			Version: ProtocolVersion, RunID: "it", PtracePID: sleeper.Process.Pid,
			Canaries: Canaries{
				HostHome: []HostPath{homeID}, Files: []HostPath{canaryID}, FileSHA256: SHA256(secret),
				EnvName: "AGENTBOX_TEST_CANARY",
			},
			Targets: Targets{
				Internet: []string{outside}, Metadata: []string{outside}, DNS: []string{dnsResponder(t)},
				HostLoopback:    &NetCanary{Addr: tcp, TokenSHA256: SHA256(token)},
				HostAbstract:    &NetCanary{Addr: abstract[1:], TokenSHA256: SHA256(token)},
				WorkspaceSocket: &NetCanary{Addr: wsSock, TokenSHA256: SHA256(token)},
			},
		},
		environ: []string{"PATH=/usr/bin:/bin", "AGENTBOX_TEST_CANARY=x", "GITHUB_TOKEN=ghp_fake", "DOCKER_HOST=unix://" + sock},
	}
}

// serve listens on addr and writes token (if any) to each connection.
func serve(t *testing.T, network, addr string, token []byte) string {
	t.Helper()
	l, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Write(token)
			c.Close()
		}
	}()
	return l.Addr().String()
}

// dnsResponder answers every datagram on 127.0.0.1 with a header-only reply.
func dnsResponder(t *testing.T) string {
	t.Helper()
	c, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	go func() {
		buf := make([]byte, 512)
		for {
			n, from, err := c.ReadFrom(buf)
			if err != nil {
				return
			}
			if n >= 12 {
				buf[2] |= 0x80
				c.WriteTo(buf[:12], from)
			}
		}
	}()
	return c.LocalAddr().String()
}

// mayBeAbsent are probes whose object a kernel may lack entirely; as root on
// the host they may then answer DENY, but only with these observations.
var mayBeAbsent = map[string][]string{
	"init-module-denied": {"ENOSYS"}, "finit-module-denied": {"ENOSYS"}, "kexec-load-denied": {"ENOSYS"},
	"kcore-unreadable": {"absent"}, "sysrq-trigger-not-writable": {"absent"},
	"uevent-helper-not-writable": {"absent"}, "release-agent-not-writable": {"absent"},
}

// TestProbesAllowAsRoot runs every probe as root on the host, outside any
// sandbox: each must see the boundary missing, which proves it can fail.
func TestProbesAllowAsRoot(t *testing.T) {
	testutil.RequireRoot(t)
	w := plant(t)
	w.cfg.Kernel = HostKernel(true) // gVisor's Sentry expected, the host kernel found
	e := &Env{Config: &w.cfg, Proc: "/proc", Environ: w.environ}
	err := Run(context.Background(), e, func(r Result) error {
		if r.Decision == Allow {
			return nil
		}
		for _, o := range mayBeAbsent[r.Probe] {
			if r.Decision == Deny && r.Observed == o {
				t.Logf("%s: %s %s (the kernel lacks it)", r.Probe, r.Decision, r.Observed)
				return nil
			}
		}
		t.Errorf("%s: %s %s, want ALLOW as root on the host (%s)", r.Probe, r.Decision, r.Observed, r.Detail)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// notConfinedByHelper are probes the helper cannot make DENY without a real
// sandbox (no user, PID or mount namespace, the host's /dev and mounts);
// the sandbox integration tests cover them.
var notConfinedByHelper = map[string]string{
	"uid-map-non-identity": "no user namespace", "host-pids-invisible": "no PID namespace",
	"device-nodes-minimal": "the host's /dev", "proc-keys-unreadable": "the host's /proc",
	"kernel-cmdline-hidden": "the host's /proc",
	"host-home-not-mounted": "the host's mounts", "container-socket-absent": "the host's mounts",
	"workspace-socket-unreachable": "no mount covers the socket (a sandbox's does)",
}

// TestProbesDenyConfined runs every probe in a helper that confines itself
// with the kernel's own means; each probe the helper can confine must DENY.
func TestProbesDenyConfined(t *testing.T) {
	testutil.RequireRoot(t)
	w := plant(t)
	// The loopback "outside" host would be the helper's own loopback; with
	// no target the probes fall back to route lookups, which send nothing.
	w.cfg.Targets.Internet, w.cfg.Targets.Metadata = nil, nil
	w.cfg.Kernel = HostKernel(false) // the host kernel, as planned
	out, err := runConfined(w.cfg, w.environ, false)
	if err != nil {
		t.Fatalf("helper: %v", err)
	}
	n := 0
	for dec := json.NewDecoder(bytes.NewReader(out)); dec.More(); n++ {
		var r Result
		if err := dec.Decode(&r); err != nil {
			t.Fatal(err)
		}
		if why, skip := notConfinedByHelper[r.Probe]; skip {
			t.Logf("%s: %s %s (not asserted: %s)", r.Probe, r.Decision, r.Observed, why)
			continue
		}
		if r.Decision != r.Expect {
			t.Errorf("%s: %s %s, want %s in the confined helper (%s)", r.Probe, r.Decision, r.Observed, r.Expect, r.Detail)
		}
	}
	if n != len(Catalog()) {
		t.Errorf("helper reported %d probes, the catalog has %d", n, len(Catalog()))
	}
}

// runConfined runs every probe of cfg in the confined helper (see
// confinedHelper), one at a time with serial, and returns its JSON lines.
func runConfined(cfg InitConfig, environ []string, serial bool) ([]byte, error) {
	b, _ := json.Marshal(cfg)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = []string{helperEnv + "=confine", "PATH=/usr/bin:/bin", "DOCKER_HOST=" + environ[3][len("DOCKER_HOST="):]}
	if serial {
		cmd.Env = append(cmd.Env, helperLimitEnv+"=1")
	}
	cmd.Stdin, cmd.Stderr = bytes.NewReader(b), os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET | syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS}
	return cmd.Output()
}

// answers are each probe's decision and observation, in order.
func answers(t *testing.T, run func(emit func(Result) error) error) []string {
	t.Helper()
	var out []string
	if err := run(func(r Result) error {
		out = append(out, r.Probe+": "+string(r.Decision)+" "+r.Observed)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func sameAnswers(t *testing.T, where string, serial, concurrent []string) {
	t.Helper()
	if len(serial) != len(concurrent) || len(serial) != len(Catalog()) {
		t.Fatalf("%s: %d results one at a time, %d at once, the catalog has %d", where, len(serial), len(concurrent), len(Catalog()))
	}
	for i := range serial {
		if serial[i] != concurrent[i] {
			t.Errorf("%s: one at a time %q, at once %q", where, serial[i], concurrent[i])
		}
	}
}

// TestProbesConcurrentAnswerAsSerialAsRoot: the probes run at once (Run)
// answer as they do one after the other, probe by probe, both as root on
// the host, where most of them succeed at what they try (setns, ptrace of
// the target, the clones, mknod, prlimit), and in the confined helper,
// where they are refused.
func TestProbesConcurrentAnswerAsSerialAsRoot(t *testing.T) {
	testutil.RequireRoot(t)
	w := plant(t)
	w.cfg.Kernel = HostKernel(false)
	e := &Env{Config: &w.cfg, Proc: "/proc", Environ: w.environ}
	probes, err := Selected(&w.cfg)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		serial := answers(t, func(emit func(Result) error) error {
			return runProbes(context.Background(), e, probes, 1, emit, nil)
		})
		concurrent := answers(t, func(emit func(Result) error) error { return Run(context.Background(), e, emit) })
		sameAnswers(t, "as root", serial, concurrent)
	}
	w.cfg.Targets.Internet, w.cfg.Targets.Metadata = nil, nil
	confined := func(serial bool) func(func(Result) error) error {
		return func(emit func(Result) error) error {
			out, err := runConfined(w.cfg, w.environ, serial)
			if err != nil {
				return err
			}
			for dec := json.NewDecoder(bytes.NewReader(out)); dec.More(); {
				var r Result
				if err := dec.Decode(&r); err != nil {
					return err
				}
				_ = emit(r)
			}
			return nil
		}
	}
	sameAnswers(t, "confined", answers(t, confined(true)), answers(t, confined(false)))
}
