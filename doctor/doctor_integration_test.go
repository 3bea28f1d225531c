//go:build integration && linux

package doctor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"github.com/opencontainers/selinux/go-selinux"
	"golang.org/x/sys/unix"

	"github.com/agentbox/agentbox/apparmor"
	"github.com/agentbox/agentbox/engine/advisory"
	"github.com/agentbox/agentbox/internal/testutil"
	"github.com/agentbox/agentbox/ledger"
)

// TestLiveHost runs doctor on this machine and checks each answer against
// what the machine says when asked another way: uname, unshare(1), the
// Landlock and SELinux libraries, the apparmor package, statfs, the
// runtimes themselves and dpkg. Nothing about this machine is hard-coded.
func TestLiveHost(t *testing.T) {
	unshare := testutil.RequireBinary(t, "unshare", "util-linux")
	rep := Run(context.Background(), Options{})
	got := map[string]Result{}
	for _, r := range rep.Checks {
		got[r.ID] = r
	}
	var uts unix.Utsname
	if err := unix.Uname(&uts); err != nil {
		t.Fatal(err)
	}
	if rel := unix.ByteSliceToString(uts.Release[:]); !strings.Contains(got["kernel"].Detail, rel) {
		t.Errorf("kernel: %q does not name uname's %s", got["kernel"].Detail, rel)
	}
	userNSWorks := exec.Command(unshare, "--user", "true").Run() == nil
	if (got["userns-create"].Status == Pass) != userNSWorks {
		t.Errorf("userns-create %s, but unshare --user true worked=%v", got["userns-create"].Status, userNSWorks)
	}
	checkLiveMAC(t, got, rep)
	checkLiveCgroup(t, got["cgroup"])
	checkLiveRuntimes(t, got)
	checkLiveEnvironment(t, got)
	checkVerdict(t, rep)
	if got["selftest"].Status != Unknown {
		t.Errorf("selftest without a SelfTest: %s, want UNKNOWN", got["selftest"].Status)
	}
}

func checkLiveMAC(t *testing.T, got map[string]Result, rep Report) {
	t.Helper()
	abi, err := llsys.LandlockGetABIVersion()
	if err != nil {
		abi = 0
	}
	if ll := got["landlock"]; abi > 0 && !strings.Contains(ll.Detail, "Landlock ABI "+strconv.Itoa(abi)) || abi == 0 && strings.Contains(ll.Detail, "Landlock ABI") {
		t.Errorf("landlock: %q, but the kernel reports ABI %d", ll.Detail, abi)
	}
	aa := apparmor.Check("/")
	if got["apparmor"].Status == Pass && aa.Enabled != strings.Contains(got["apparmor"].Detail, "is enabled") {
		t.Errorf("apparmor: %q, but apparmor.Check says enabled=%v", got["apparmor"].Detail, aa.Enabled)
	}
	enforcing := selinux.GetEnabled() && selinux.EnforceMode() == selinux.Enforcing
	mac := got["mac"]
	switch {
	case enforcing && mac.Status != Pass:
		t.Errorf("mac %s with SELinux enforcing", mac.Status)
	case !selinux.GetEnabled() && !aa.Enabled && abi > 0 && (mac.Status != Warn || mac.Residual != "lsm-unavailable" || !strings.Contains(mac.Detail, "Landlock ABI "+strconv.Itoa(abi)+" applied instead")):
		t.Errorf("mac %s %q: want the Landlock ABI %d residual", mac.Status, mac.Detail, abi)
	}
	if mac.Status == Warn && !hasResidual(rep, mac.residualCode()) {
		t.Errorf("mac warns but residual %s is missing", mac.residualCode())
	}
}

func checkLiveCgroup(t *testing.T, r Result) {
	t.Helper()
	want := "v1"
	switch {
	case statfsCgroup2("/sys/fs/cgroup"):
		want = "v2"
	case statfsCgroup2("/sys/fs/cgroup/unified"):
		want = "hybrid"
	}
	if !strings.HasPrefix(r.Detail, "cgroup "+want) && os.Geteuid() == 0 {
		t.Errorf("cgroup: %q, but statfs says %s", r.Detail, want)
	}
}

// statfsCgroup2 asks statfs(2), not the mount table doctor reads.
func statfsCgroup2(dir string) bool {
	var st unix.Statfs_t
	return unix.Statfs(dir, &st) == nil && st.Type == unix.CGROUP2_SUPER_MAGIC
}

func checkLiveRuntimes(t *testing.T, got map[string]Result) {
	t.Helper()
	osr := Gather(context.Background(), Live()).OS
	for _, name := range runtimeNames {
		p, err := exec.LookPath(name)
		r, reported := got["runtime-"+name]
		if err != nil {
			if reported && r.Status == Pass {
				t.Errorf("runtime-%s PASS, but %s is not on PATH", name, name)
			}
			continue
		}
		out, _ := exec.Command(p, "--version").Output()
		version := strings.Fields(firstLine(string(out)) + " ? ? ?")[2]
		if !reported || !strings.Contains(r.Detail, version) {
			t.Errorf("runtime-%s: %q does not report version %s", name, r.Detail, version)
		}
		packaged := exec.Command("dpkg-query", "-S", p).Run() == nil || exec.Command("rpm", "-qf", p).Run() == nil
		if packaged != strings.Contains(r.Detail, "from package") {
			t.Errorf("runtime-%s: %q, but the package manager says packaged=%v", name, r.Detail, packaged)
		}
		if packaged {
			checkNeverCalledVulnerableBlindly(t, got, name, osr)
		}
	}
}

// checkNeverCalledVulnerableBlindly: a packaged runtime fails a CVE check
// only where the table has that distribution's data for it.
func checkNeverCalledVulnerableBlindly(t *testing.T, got map[string]Result, name string, osr OSRelease) {
	t.Helper()
	tab, err := advisory.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range tab.ForRuntime(name) {
		r := got[e.Key()]
		if r.Status != Fail {
			continue
		}
		known := false
		for _, d := range e.Distros {
			known = known || d.OS == osr.ID && d.VersionID == osr.VersionID && d.Package == name
		}
		if !known {
			t.Errorf("%s FAILs a packaged runtime without %s %s data: %q", r.ID, osr.ID, osr.VersionID, r.Detail)
		}
	}
}

func checkLiveEnvironment(t *testing.T, got map[string]Result) {
	t.Helper()
	for _, marker := range []string{"/.dockerenv", "/run/.containerenv"} {
		if _, err := os.Stat(marker); err == nil && got["container"].Status == Pass {
			t.Errorf("container PASS although %s exists", marker)
		}
	}
	cpu, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		t.Fatal(err)
	}
	if hv := bytes.Contains(cpu, []byte(" hypervisor")); hv != strings.Contains(got["vm"].Detail, "virtual machine") {
		t.Errorf("vm: %q, but cpuinfo hypervisor flag=%v", got["vm"].Detail, hv)
	}
}

func checkVerdict(t *testing.T, rep Report) {
	t.Helper()
	blocks := false
	for _, r := range rep.Checks {
		blocks = blocks || r.Blocks()
	}
	if blocks != (rep.ExitCode() == ExitHost) || blocks != (rep.Verdict.Status == VerdictCannot) {
		t.Errorf("verdict %s exit %d, but blocking results exist=%v", rep.Verdict.Status, rep.ExitCode(), blocks)
	}
}

// TestCommandEndToEnd builds agentbox, runs `agentbox doctor --json` and
// checks the document, the exit code and the ledger record it wrote.
func TestCommandEndToEnd(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "agentbox")
	build := exec.Command("go", "build", "-o", bin, "github.com/agentbox/agentbox/cmd/agentbox")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	state := t.TempDir()
	cmd := exec.Command(bin, "doctor", "--json")
	cmd.Env = append(os.Environ(), "AGENTBOX_STATE_DIR="+state)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	var rep Report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("stdout is not one JSON report: %v\n%s\nstderr: %s", err, stdout.String(), stderr.String())
	}
	layers := len(layerOrder)
	if !Live().Darwin {
		layers-- // LayerDarwinUser is a Mac's only
	}
	if code != rep.ExitCode() || len(rep.Checks) == 0 || len(rep.Layers) != layers {
		t.Errorf("exit %d for verdict %s (%d checks, %d layers)", code, rep.Verdict.Status, len(rep.Checks), len(rep.Layers))
	}
	recs, _, err := ledger.Open(filepath.Join(state, ledger.FileName)).List()
	if err != nil || len(recs) != 1 {
		t.Fatalf("ledger: %d records, %v", len(recs), err)
	}
	rec := recs[0]
	if rec.Kind != ledger.KindDoctor || rec.ExitCode != code || len(rec.HostVerification) != len(rep.Checks) {
		t.Errorf("ledger record kind %s exit %d with %d observations; want doctor, %d, %d", rec.Kind, rec.ExitCode, len(rec.HostVerification), code, len(rep.Checks))
	}
	for _, c := range rep.Checks {
		if v := rec.HostVerification[c.ID]; !strings.HasPrefix(v, string(c.Status)+": ") {
			t.Errorf("ledger has %s = %q, report says %s", c.ID, v, c.Status)
		}
	}
}

func hasResidual(rep Report, code string) bool {
	for _, r := range rep.Residuals {
		if r.Code == code {
			return true
		}
	}
	return false
}
