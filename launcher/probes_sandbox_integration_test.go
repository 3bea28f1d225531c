//go:build integration

package launcher

import (
	"bytes"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/agentbox/agentbox/internal/testutil"
	"github.com/agentbox/agentbox/policy"
	"github.com/agentbox/agentbox/selftest"
)

// probeSandbox describes one probe-only sandbox that a test builds in this
// process, the way `agentbox selftest` builds it, with the policy flags
// below and, after the self-audit passed, the spec changes of weaken.
type probeSandbox struct {
	rootfs  string
	ro      []string // --ro-bind
	env     []string // --env
	accept  []string // --accept CODE=reason
	targets []string // --probe-target KIND=IP:PORT
	// weaken changes the bundle's spec (a deep copy of the audited one),
	// weakenInit the config init gets.
	weaken     func(*specs.Spec)
	weakenInit func(*selftest.InitConfig)
}

// probeOutcome is what a probe sandbox reported: every in-sandbox probe
// and host check by name, the selftest exit code, its teardown, and the
// image root the plan used ("" for the host-binds default).
type probeOutcome struct {
	results map[string]selftest.Result
	code    int
	clean   bool
	image   string
	output  string
}

// syncBuffer is the launcher's stdout and stderr: written by the launcher
// only, read by the test after the run.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// run builds the sandbox, runs every probe and the host's verification in
// it, tears it down and returns what it reported. Private state and run
// roots keep it away from the machine's ledger and from other tests, and
// no policy file of the user's applies.
func (p probeSandbox) run(t *testing.T) probeOutcome {
	t.Helper()
	vars := map[string]string{
		"AGENTBOX_STATE_DIR": t.TempDir(),
		"AGENTBOX_RUN_ROOT":  shortTempDir(t, "abp-"),
	}
	getenv := func(k string) string {
		if v, ok := vars[k]; ok {
			return v
		}
		return os.Getenv(k)
	}
	ws := shortTempDir(t, "abw-")
	pol := policy.Policy{Workspace: ws, Rootfs: p.rootfs, Binds: policy.Binds{ReadOnly: p.ro}}
	// The suite runs on the host's default runtime and engine unless
	// AGENTBOX_TEST_RUNTIME or AGENTBOX_TEST_ENGINE (with
	// AGENTBOX_TEST_CONTAINERD) names others, as cmd/agentbox's does.
	pol.Runtime, pol.Engine = os.Getenv("AGENTBOX_TEST_RUNTIME"), os.Getenv("AGENTBOX_TEST_ENGINE")
	if pol.Engine == EngineContainerd {
		if pol.Address = os.Getenv("AGENTBOX_TEST_CONTAINERD"); pol.Address == "" {
			pol.Address = "/run/agentbox-containerd/containerd.sock" // scripts/containerd-up.sh
		}
	}
	if len(p.env) > 0 {
		pol.Env.Allow = p.env
	}
	for _, a := range p.accept {
		code, reason, _ := strings.Cut(a, "=")
		pol.Accept = append(pol.Accept, policy.Acceptance{Code: code, Reason: reason})
	}
	_, targets, err := ParseSelfTestFlags(nil, p.targets)
	if err != nil {
		t.Fatal(err)
	}
	var out syncBuffer
	cfg := Config{
		ProbesOnly: true, Policy: pol, Sources: policy.Sources{Workspace: ws, EUID: uint32(os.Geteuid())},
		Stdin: strings.NewReader(""), Stdout: &out, Stderr: &out, Getenv: getenv,
		InitPath: probeInitBinary(t), Targets: targets, Weaken: p.weaken, WeakenInit: p.weakenInit,
	}
	res, err := Run(t.Context(), cfg)
	if err != nil {
		t.Fatalf("selftest: %v\nlauncher output:\n%s", err, out.String())
	}
	o := probeOutcome{results: map[string]selftest.Result{}, code: res.ExitCode, output: out.String()}
	for _, r := range res.Probes {
		o.results[r.Probe] = r
	}
	if res.Plan != nil {
		o.image = res.Plan.Rootfs.Image
	}
	o.clean = res.Record.Teardown != nil && res.Record.Teardown.Clean()
	if !o.clean {
		t.Errorf("teardown of run %s was not clean: %+v", res.Record.RunID, res.Record.Teardown)
	}
	return o
}

// shortTempDir makes a 0755 directory under the system's temporary
// directory: short, since unix socket paths live below the run root, and
// searchable by the sandbox's mapped ids, since its workspace is bound in.
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

// probeInitBinary is the agentbox-init that TestMain built (or that
// $AGENTBOX_INIT names).
func probeInitBinary(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(initBin); err != nil {
		t.Fatalf("agentbox-init %s: %v (build it with 'make build')", initBin, err)
	}
	return initBin
}

// busyboxRoot builds an image root from the host's static busybox: its
// applets as symlinks, and the passwd and group files an image carries.
func busyboxRoot(t *testing.T, busybox string) string {
	t.Helper()
	root := shortTempDir(t, "abbb-")
	for _, d := range []string{"bin", "sbin", "usr/bin", "usr/sbin", "etc", "root"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(busybox)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "bin", "busybox"), data, 0o755); err != nil {
		t.Fatal(err)
	}
	list, err := exec.Command(busybox, "--list-full").Output()
	if err != nil {
		t.Fatalf("%s --list-full: %v", busybox, err)
	}
	for _, applet := range strings.Fields(string(list)) {
		link := filepath.Join(root, applet)
		if _, err := os.Lstat(link); err == nil {
			continue
		}
		if err := os.Symlink("/bin/busybox", link); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		"etc/passwd": "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n",
		"etc/group":  "root:x:0:\nnogroup:x:65534:\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(root, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// staticBusybox returns the host's busybox, which must be statically linked
// to work in a root that has nothing else.
func staticBusybox(t *testing.T) string {
	t.Helper()
	p := testutil.RequireBinary(t, "busybox", "busybox-static")
	f, err := elf.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, prog := range f.Progs {
		if prog.Type == elf.PT_INTERP {
			testutil.Skip(t, p+" is dynamically linked (apt-get install busybox-static)")
		}
	}
	return p
}
