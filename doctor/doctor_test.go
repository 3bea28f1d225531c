package doctor

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentbox/agentbox/engine/advisory"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// expect is what one check must report on a fixture: its status and a
// piece of its fix line ("" when it must have none).
type expect struct {
	status Status
	fix    string
}

var hostCases = []struct {
	name    string
	verdict string
	exit    int
	checks  map[string]expect
}{
	{
		name: "ubuntu-24.04-restricted-userns", verdict: VerdictCannot, exit: ExitHost,
		checks: map[string]expect{
			"userns-apparmor-restrict": {Fail, "profile agentbox-userns-runc /usr/sbin/runc flags=(unconfined) {\\n  userns,\\n}"},
			"userns-create":            {Pass, ""},
			"subids":                   {Pass, ""},
			"mac":                      {Pass, ""},
			"cgroup":                   {Pass, ""},
			"runc-CVE-2024-21626":      {Pass, ""},
			"runc-CVE-2025-31133":      {Warn, "see https://ubuntu.com/security/CVE-2025-31133"},
			"runc-CVE-2026-41579":      {Warn, "zgrep CVE-2026-41579 /usr/share/doc/runc/changelog.Debian.gz"},
			"agent-claude":             {Warn, "remove the setting from /home/ana/.claude/settings.json"},
			"agent-codex":              {Pass, ""},
			"selftest":                 {Unknown, "agentbox selftest"},
		},
	},
	{
		name: "fedora-43-selinux", verdict: VerdictOK, exit: ExitOK,
		checks: map[string]expect{
			"selinux":               {Pass, ""},
			"mac":                   {Pass, ""},
			"landlock":              {Pass, ""},
			"cgroup":                {Pass, ""},
			"subids":                {Pass, ""},
			"runtime-default":       {Pass, ""},
			"runtime-crun":          {Pass, ""},
			"crun-CVE-2026-47766":   {Pass, ""},
			"crun-procfs-hardening": {Pass, ""},
			"podman":                {Pass, ""},
			"vm":                    {Pass, ""},
			"selftest":              {Pass, ""},
		},
	},
	{
		name: "debian-12-packaged-runc", verdict: VerdictResiduals, exit: ExitOK,
		checks: map[string]expect{
			"runc-CVE-2019-5736":       {Pass, ""},
			"runc-CVE-2024-21626":      {Pass, ""},
			"runc-CVE-2024-45310":      {Warn, "replace runc with release 1.1.14, 1.2.0-rc.3 or later"},
			"runc-CVE-2025-31133":      {Warn, "replace runc with release 1.2.8, 1.3.3, 1.4.0-rc.3 or later"},
			"runc-CVE-2025-52565":      {Warn, "replace runc"},
			"runc-CVE-2025-52881":      {Warn, "replace runc"},
			"runc-CVE-2026-41579":      {Warn, "replace runc"},
			"mac":                      {Pass, ""},
			"subids":                   {Pass, ""},
			"docker-group":             {Warn, "gpasswd -d deploy docker"},
			"docker-live-restore":      {Pass, ""},
			"docker-userns-remap":      {Warn, `set "userns-remap": "default" in /etc/docker/daemon.json`},
			"docker-no-new-privileges": {Warn, `set "no-new-privileges": true`},
			"selftest":                 {Pass, ""},
		},
	},
	{
		name: "upstream-runc-1.1.5", verdict: VerdictCannot, exit: ExitHost,
		checks: map[string]expect{
			"runtime-runc":        {Pass, ""},
			"runc-CVE-2019-5736":  {Pass, ""},
			"runc-CVE-2024-21626": {Fail, "replace runc with release 1.1.12 or later"},
			"runc-CVE-2025-31133": {Warn, "replace runc"},
			"runc-CVE-2026-41579": {Warn, "replace runc"},
		},
	},
	{
		name: "inside-docker-container", verdict: VerdictCannot, exit: ExitHost,
		checks: map[string]expect{
			"container":                {Warn, "run agentbox on the host or in a VM"},
			"userns-create":            {Fail, "run agentbox on the host or in a VM, not inside a container"},
			"userns-apparmor-restrict": {Pass, ""},
			"seccomp":                  {Pass, ""},
			"lsm-active":               {Unknown, "mount -t securityfs"},
			"mac":                      {Unknown, "run agentbox on the host instead"},
			"runtime-default":          {Fail, "apt-get install runc"},
			"docker":                   {Pass, ""},
			"selftest":                 {Unknown, "agentbox selftest"},
		},
	},
}

func runFixture(t *testing.T, name string) Report {
	t.Helper()
	h, fx := loadFixture(t, name)
	f := Gather(context.Background(), h)
	f.RunRoot = gatherRunRoot(h, fx.RunRoot)
	runSelfTest(context.Background(), fx.selfTest(), f)
	return Evaluate(f)
}

func TestHosts(t *testing.T) {
	for _, tc := range hostCases {
		t.Run(tc.name, func(t *testing.T) {
			rep := runFixture(t, tc.name)
			checkGolden(t, tc.name, rep)
			if rep.Verdict.Status != tc.verdict || rep.ExitCode() != tc.exit {
				t.Errorf("verdict %s, exit %d; want %s, exit %d (%s)", rep.Verdict.Status, rep.ExitCode(), tc.verdict, tc.exit, rep.Verdict.Summary)
			}
			got := map[string]Result{}
			for _, r := range rep.Checks {
				if _, dup := got[r.ID]; dup {
					t.Errorf("check id %s reported twice", r.ID)
				}
				got[r.ID] = r
			}
			for id, want := range tc.checks {
				r, ok := got[id]
				switch {
				case !ok:
					t.Errorf("%s: not reported", id)
				case r.Status != want.status:
					t.Errorf("%s: %s (%s), want %s", id, r.Status, r.Detail, want.status)
				case want.fix == "" && r.Fix != "":
					t.Errorf("%s: unexpected fix %q", id, r.Fix)
				case !strings.Contains(r.Fix, want.fix):
					t.Errorf("%s: fix %q lacks %q", id, r.Fix, want.fix)
				}
			}
		})
	}
}

// checkGolden compares the report's JSON and text with testdata/golden.
func checkGolden(t *testing.T, name string, rep Report) {
	t.Helper()
	var js, txt bytes.Buffer
	if err := WriteJSON(&js, rep); err != nil {
		t.Fatal(err)
	}
	if err := WriteText(&txt, rep, false); err != nil {
		t.Fatal(err)
	}
	for ext, got := range map[string][]byte{".json": js.Bytes(), ".txt": txt.Bytes()} {
		path := filepath.Join("testdata", "golden", name+ext)
		if *update {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test ./doctor -update)", err)
		}
		if diff := cmp.Diff(string(want), string(got)); diff != "" {
			t.Errorf("%s differs (-want +got; go test ./doctor -update rewrites it):\n%s", path, diff)
		}
	}
}

// Bookworm's runc lacks the 2025 procfs fixes: the default root does not
// expose them (residuals), --rootfs does (run refuses).
func TestRuntimeModes(t *testing.T) {
	rep := runFixture(t, "debian-12-packaged-runc")
	got := map[string]RuntimeMode{}
	for _, m := range rep.Modes {
		got[m.Runtime+" "+m.Mode] = m
	}
	def, rootfs := got["runc default"], got["runc --rootfs"]
	if !def.Holds || !def.Verdict || len(def.Refusals) != 0 || !contains(def.Residuals, "runc-CVE-2025-31133") {
		t.Errorf("runc default: %+v; want it to launch with runc-CVE-2025-31133 as a residual", def)
	}
	want := []string{"runc-CVE-2025-31133", "runc-CVE-2025-52565", "runc-CVE-2025-52881"}
	if rootfs.Holds || !cmp.Equal(rootfs.Refusals, want) || len(rootfs.Fixes) != len(want) || !strings.Contains(rootfs.Summary(), "--accept runtime-vulnerable=REASON") {
		t.Errorf("runc --rootfs: %+v; want refusals %v", rootfs, want)
	}
	if !contains(rootfs.Residuals, "runc-CVE-2024-45310") {
		t.Errorf("runc --rootfs: low-severity runc-CVE-2024-45310 is no residual: %+v", rootfs)
	}
}

// A runtime other than the verdict runtime never decides the runtime
// layer: its blocking result is a WARN saying what run does with it.
func TestOtherRuntimeDoesNotDecide(t *testing.T) {
	tab := advisory.Table{Checked: "2026-12-01", Entries: []advisory.Entry{{
		Runtime: "crun", ID: "CVE-2099-0001", Severity: "high", Fixed: []string{"9.0"}, Attack: "anything", Sources: []string{"https://example.invalid"},
	}}}
	fs := advisory.Judge(tab, advisory.Runtime{Name: "crun", Version: "1.20"}, advisory.Distro{}, advisory.Mode{UserNS: true})
	if len(fs) != 1 || !fs[0].Blocks() {
		t.Fatalf("findings %+v; want one that blocks", fs)
	}
	if r := cveResult(fs[0], fs[0], true); r.Status != Fail || r.Layer != LayerRuntime {
		t.Errorf("verdict runtime: %s layer %q, want FAIL in the runtime layer", r.Status, r.Layer)
	}
	r := cveResult(fs[0], fs[0], false)
	if r.Blocks() || r.Layer != "" || r.Status != Warn || !strings.Contains(r.Detail, "with runtime: crun, agentbox run refuses") {
		t.Errorf("other runtime: %s layer %q %q; want a WARN outside the layers", r.Status, r.Layer, r.Detail)
	}
}
