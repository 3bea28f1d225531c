//go:build integration && linux

package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/doctor"
	"github.com/agentbox/agentbox/engine/advisory"
	"github.com/agentbox/agentbox/internal/testutil"
	"github.com/agentbox/agentbox/launcher"
	"github.com/agentbox/agentbox/ledger"
)

// Doctor and run tell the same story about this host's runc: for the
// default root and for --rootfs, what `agentbox doctor` says run does
// (launch with residual lines, or refuse) is what `agentbox run` does, and
// both are what the advisory table says of runc's real version, read here
// from runc and the package manager. Nothing about this host's answer is
// written down: on a runc with every fix, both modes launch.
func TestDoctorAndRunAgree(t *testing.T) {
	runc := testutil.RequireBinary(t, "runc", "runc")
	uid, gid := testUser(t)
	env := isolatedEnv(t)
	ws := workspaceOwnedBy(t, uid, gid)
	rootfs := busyboxRootfs(t)
	modes := doctorModes(t, env, ws)
	for _, m := range []struct {
		mode  advisory.Mode
		flags []string
	}{
		// runc named: where crun is the default runtime, runc is still
		// what this test tells the story of.
		{advisory.Mode{UserNS: true, Rootless: os.Geteuid() != 0}, []string{"--runtime", "runc"}},
		{advisory.Mode{Rootfs: true, UserNS: true, Rootless: os.Geteuid() != 0}, []string{"--runtime", "runc", "--rootfs", rootfs}},
	} {
		t.Run(m.mode.Name(), func(t *testing.T) {
			want := expectedVerdicts(t, runc, m.mode)
			got, ok := modes["runc "+m.mode.Name()]
			if !ok {
				t.Fatalf("doctor reports no runc %s mode: %+v", m.mode.Name(), modes)
			}
			refusals, residuals := keys(want, advisory.Finding.Blocks), keys(want, advisory.Finding.Residual)
			if got.Holds != (len(refusals) == 0) || !slices.Equal(got.Refusals, refusals) || !slices.Equal(got.Residuals, residuals) {
				t.Errorf("doctor: holds=%v refusals %v residuals %v; the table says refusals %v residuals %v", got.Holds, got.Refusals, got.Residuals, refusals, residuals)
			}
			checkSpec(t, env, ws, m.flags, want)
			if len(refusals) == 0 {
				checkLaunches(t, env, ws, m.flags, residuals)
				return
			}
			checkRefuses(t, env, ws, m.flags, want)
		})
	}
}

// doctorModes runs `agentbox doctor --json` and returns its runtime modes
// by "RUNTIME MODE".
func doctorModes(t *testing.T, env []string, ws string) map[string]doctor.RuntimeMode {
	t.Helper()
	r := runIn(t, env, ws, "doctor", "--json")
	var rep doctor.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("doctor --json (exit %d): %v\n%s\n%s", r.code, err, r.stdout, r.stderr)
	}
	out := map[string]doctor.RuntimeMode{}
	for _, m := range rep.Modes {
		out[m.Runtime+" "+m.Mode] = m
	}
	for _, l := range rep.Layers {
		if l.Name == doctor.LayerRuntime && out["runc default"].Verdict && l.Holds != out["runc default"].Holds {
			t.Errorf("doctor's runtime layer holds=%v, but its default mode on runc holds=%v", l.Holds, out["runc default"].Holds)
		}
	}
	return out
}

// expectedVerdicts is the table's judgement of runc as this test reads it:
// `runc --version`, and the package that owns the binary.
func expectedVerdicts(t *testing.T, runc string, m advisory.Mode) []advisory.Finding {
	t.Helper()
	tab, err := advisory.Load()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(runc, "--version").Output()
	if err != nil {
		t.Fatalf("runc --version: %v", err)
	}
	first, _, _ := strings.Cut(string(out), "\n")
	fields := strings.Fields(first) // runc version 1.1.5+ds1
	if len(fields) < 3 {
		t.Fatalf("runc --version printed %q", first)
	}
	rt := advisory.Runtime{Name: "runc", Path: runc, Version: fields[2]}
	if owner, err := exec.Command("dpkg-query", "-S", runc).Output(); err == nil {
		name, _, _ := strings.Cut(strings.TrimSpace(string(owner)), ":")
		v, err := exec.Command("dpkg-query", "-W", "-f", "${Version}", name).Output()
		if err != nil {
			t.Fatalf("dpkg-query -W %s: %v", name, err)
		}
		rt.Package = &advisory.Package{Manager: "dpkg", Name: name, Version: strings.TrimSpace(string(v))}
	}
	d := doctor.ReadOS(doctor.Live()).Distro()
	return advisory.Judge(tab, rt, d, m)
}

func keys(fs []advisory.Finding, pick func(advisory.Finding) bool) []string {
	var out []string
	for _, f := range fs {
		if pick(f) {
			out = append(out, f.Key)
		}
	}
	return out
}

// checkSpec: `agentbox spec` carries every verdict as an annotation.
func checkSpec(t *testing.T, env []string, ws string, flags []string, want []advisory.Finding) {
	t.Helper()
	r := runIn(t, env, ws, append(append([]string{"spec"}, flags...), "--", "true")...)
	var s struct {
		Annotations map[string]string `json:"annotations"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &s); err != nil || r.code != 0 {
		t.Fatalf("spec: exit %d, %v\n%s", r.code, err, r.stderr)
	}
	for _, f := range want {
		if v := s.Annotations[launcher.AnnotationPrefix+f.Key]; !strings.HasPrefix(v, string(f.Verdict)+" ") {
			t.Errorf("spec annotation %s = %q, want verdict %s", f.Key, v, f.Verdict)
		}
	}
}

// checkLaunches: run launches and says each residual, which the ledger
// records.
func checkLaunches(t *testing.T, env []string, ws string, flags []string, residuals []string) {
	t.Helper()
	r := runIn(t, env, ws, append(append([]string{"run"}, flags...), "--", "true")...)
	if r.code != 0 {
		t.Fatalf("run: exit %d, want 0 (doctor says this mode launches)\n%s", r.code, r.stderr)
	}
	rec := lastRecord(t, env)
	for _, key := range residuals {
		if !slices.ContainsFunc(strings.Split(r.stderr, "\n"), func(line string) bool {
			return strings.HasPrefix(line, "agentbox: residual runtime: ") && strings.Contains(line, key)
		}) {
			t.Errorf("run said no residual line for %s:\n%s", key, r.stderr)
		}
		if !slices.ContainsFunc(rec.Residuals, func(res ledger.Residual) bool { return res.Code == key }) {
			t.Errorf("record %s has no residual %s", rec.RunID, key)
		}
	}
}

// checkRefuses: run refuses with exit 3, naming each refusing CVE, its fix
// and the acceptance; accepting one of several still refuses for the
// others; accepting the code lifts the refusal, and the record keeps the
// accepted findings.
func checkRefuses(t *testing.T, env []string, ws string, flags []string, want []advisory.Finding) {
	t.Helper()
	args := append(append([]string{"run"}, flags...), "--", "true")
	r := runIn(t, env, ws, args...)
	if r.code != 3 {
		t.Fatalf("run: exit %d, want 3 (doctor says this mode refuses)\n%s", r.code, r.stderr)
	}
	var blocking []advisory.Finding
	for _, f := range want {
		if f.Blocks() {
			blocking = append(blocking, f)
		}
	}
	for _, f := range blocking {
		if !strings.Contains(r.stderr, "agentbox: finding runtime-vulnerable (high) "+f.Key+": ") || !strings.Contains(r.stderr, f.Fix) {
			t.Errorf("run's refusal does not name %s with its fix %q:\n%s", f.Key, f.Fix, r.stderr)
		}
	}
	if !strings.Contains(r.stderr, "--accept runtime-vulnerable=REASON") {
		t.Errorf("run's refusal does not say how to accept it:\n%s", r.stderr)
	}
	if len(blocking) > 1 {
		pol := writePolicyOutside(t, "accept:\n  - code: runtime-vulnerable\n    subject: "+blocking[0].Key+"\n    reason: test\n")
		r := runIn(t, env, ws, append([]string{"run", "--policy", pol}, args[1:]...)...)
		if r.code != 3 || strings.Contains(r.stderr, "(high) "+blocking[0].Key+":") || !strings.Contains(r.stderr, blocking[1].Key) {
			t.Errorf("accepting %s alone: exit %d, want 3 for the others\n%s", blocking[0].Key, r.code, r.stderr)
		}
	}
	r = runIn(t, env, ws, append([]string{"run", "--accept", "runtime-vulnerable=lab VM, no secrets"}, args[1:]...)...)
	if r.code != 0 {
		t.Fatalf("run --accept runtime-vulnerable: exit %d, want 0\n%s", r.code, r.stderr)
	}
	rec := lastRecord(t, env)
	for _, f := range blocking {
		if !slices.ContainsFunc(rec.Findings, func(lf ledger.Finding) bool {
			return lf.Code == "runtime-vulnerable" && lf.Subject == f.Key && lf.Accepted && lf.Reason == "lab VM, no secrets"
		}) {
			t.Errorf("record %s lacks the accepted runtime-vulnerable %s: %+v", rec.RunID, f.Key, rec.Findings)
		}
	}
	if r := runIn(t, env, ws, append([]string{"run", "--accept", "runtime-vulnerabel=typo"}, args[1:]...)...); r.code != 2 {
		t.Errorf("a misspelt code: exit %d, want 2 (usage)\n%s", r.code, r.stderr)
	}
}

// busyboxRootfs is an image root made of the host's static busybox: the
// --rootfs mode needs an unpacked image, and nothing can be pulled.
func busyboxRootfs(t *testing.T) string {
	t.Helper()
	bb := testutil.RequireBinary(t, "busybox", "busybox-static")
	if out, err := exec.Command("file", "-L", bb).Output(); err == nil && !strings.Contains(string(out), "statically linked") {
		testutil.Skip(t, bb+" is dynamically linked (apt-get install busybox-static)")
	}
	root := shortTempDir(t, "abrf-")
	for _, d := range []string{"bin", "etc"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(bb)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "bin", "busybox"), data, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, applet := range []string{"sh", "true"} {
		if err := os.Symlink("busybox", filepath.Join(root, "bin", applet)); err != nil {
			t.Fatal(err)
		}
	}
	for name, content := range map[string]string{"etc/passwd": "root:x:0:0:root:/root:/bin/sh\n", "etc/group": "root:x:0:\n"} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}
