package launcher

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/engine/advisory"
	"github.com/agentbox/agentbox/ledger"
	"github.com/agentbox/agentbox/policy"
)

func TestLaunchMode(t *testing.T) {
	id := func(m policy.IDMode, rootless bool) policy.Identity {
		return policy.Identity{IDMap: policy.IDMap{Mode: m}, Rootless: rootless}
	}
	for _, tc := range []struct {
		name string
		plan policy.Plan
		want advisory.Mode
	}{
		{"root, default root", policy.Plan{Identity: id(policy.IDSlot, false)}, advisory.Mode{UserNS: true}},
		{"rootless with subordinate ids", policy.Plan{Identity: id(policy.IDSubIDs, true)}, advisory.Mode{UserNS: true, Rootless: true}},
		{"rootless, one id", policy.Plan{Identity: id(policy.IDSingle, true)}, advisory.Mode{UserNS: true, Rootless: true}},
		{"--rootfs", policy.Plan{Rootfs: policy.Rootfs{Image: "/srv/img"}, Identity: id(policy.IDSlot, false)}, advisory.Mode{Rootfs: true, UserNS: true}},
		{"an engine's ids", policy.Plan{Identity: id(policy.IDEngine, false)}, advisory.Mode{}},
		{"no id map decided", policy.Plan{}, advisory.Mode{}},
	} {
		if got := LaunchMode(&tc.plan); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

// fakeRuntime is an executable called runc that reports version v. It
// lives below the package directory: the planner refuses a runtime in a
// directory others can write, such as /tmp.
func fakeRuntime(t *testing.T, v string) string {
	t.Helper()
	dir, err := os.MkdirTemp(trustedParent(t), ".fake-runtime-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p, err := filepath.Abs(filepath.Join(dir, "runc"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("#!/bin/sh\necho 'runc version "+v+"'\necho 'spec: 1.0.2-dev'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// trustedParent is a directory for a runtime agentbox will execute: none
// of it or its parents may be writable by group or others (policy's
// trustedBinary). The package directory, unless the checkout lies below
// one such (a clone under /tmp); then, as root, /run.
func trustedParent(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	for p := dir; ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm()&0o022 != 0 {
			if os.Geteuid() != 0 {
				t.Fatalf("%s is writable by group or others, and only root can use /run instead: check the tests out in a directory only you can write", p)
			}
			return "/run"
		}
		if p == "/" {
			return dir
		}
	}
}

// On the fake engine, with a runc binary that no package owns: 1.1.11
// lacks the CVE-2024-21626 fix, which every mode exposes, so the launch is
// refused before the bundle exists, with the code, the fix and the
// acceptance; the acceptance lifts it and the record keeps the accepted
// finding. 1.1.12 launches, with the 2025 CVEs as residual lines (the
// default root does not expose them), recorded as residuals.
func TestRunJudgesItsRuntime(t *testing.T) {
	r := newFakeRun(t, fakeInit{Probes: passing})
	r.cfg.Policy.Runtime = fakeRuntime(t, "1.1.11")
	_, err := r.run(t)
	stderr := r.cfg.Stderr.(*strings.Builder).String()
	var e *Error
	if !errors.As(err, &e) || e.Step != "audit" || ExitCode(err) != ExitRefused {
		t.Fatalf("error %v, want a refusal at the audit step (exit 3)\n%s", err, stderr)
	}
	for _, want := range []string{"finding runtime-vulnerable (high) runc-CVE-2024-21626", "release 1.1.12 or later", "--accept runtime-vulnerable=REASON", `subject: "runc-CVE-2024-21626"`} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if calls := r.eng.called(); len(calls) != 1 || calls[0] != "teardown" {
		t.Errorf("engine calls %v; want no bundle before the refusal", calls)
	}

	r = newFakeRun(t, fakeInit{Probes: passing})
	r.cfg.Policy.Runtime = fakeRuntime(t, "1.1.11")
	r.cfg.Policy.Accept = []policy.Acceptance{{Code: "runtime-vulnerable", Subject: "runc-CVE-2024-21626", Reason: "lab VM"}}
	if _, err := r.run(t); err != nil {
		t.Fatalf("accepted: %v\n%s", err, r.cfg.Stderr)
	}
	rec := r.records(t)[0]
	if f := findingOf(rec, "runtime-vulnerable"); f == nil || !f.Accepted || f.Subject != "runc-CVE-2024-21626" || f.Reason != "lab VM" {
		t.Errorf("record findings %+v, want the accepted runtime-vulnerable", rec.Findings)
	}

	r = newFakeRun(t, fakeInit{Probes: passing})
	r.cfg.Policy.Runtime = fakeRuntime(t, "1.1.12")
	if _, err := r.run(t); err != nil {
		t.Fatalf("1.1.12: %v\n%s", err, r.cfg.Stderr)
	}
	stderr = r.cfg.Stderr.(*strings.Builder).String()
	rec = r.records(t)[0]
	for _, key := range []string{"runc-CVE-2025-31133", "runc-CVE-2025-52565", "runc-CVE-2025-52881"} {
		if !saysRuntimeResidual(stderr, key, "does not expose") || !hasResidual(rec, key) {
			t.Errorf("%s: no residual line or record residual\n%s", key, stderr)
		}
		if v := rec.HostVerification[key]; !strings.HasPrefix(v, "affected-not-exposed") {
			t.Errorf("host verification %s = %q", key, v)
		}
	}
	if v := rec.HostVerification["runc-CVE-2024-21626"]; !strings.HasPrefix(v, "fixed") || findingOf(rec, "runtime-vulnerable") != nil {
		t.Errorf("runc-CVE-2024-21626 = %q, findings %+v; want it fixed and no finding", v, rec.Findings)
	}
}

func findingOf(rec ledger.Record, code string) *ledger.Finding {
	for i := range rec.Findings {
		if rec.Findings[i].Code == code {
			return &rec.Findings[i]
		}
	}
	return nil
}

func hasResidual(rec ledger.Record, code string) bool {
	for _, r := range rec.Residuals {
		if r.Code == code {
			return true
		}
	}
	return false
}

// agentbox spec carries every verdict as an annotation and refuses nothing.
func TestSpecCarriesTheVerdicts(t *testing.T) {
	r := newFakeRun(t, fakeInit{})
	r.cfg.Policy.Runtime = fakeRuntime(t, "1.1.11")
	s, err := Spec(t.Context(), r.cfg)
	if err != nil {
		t.Fatal(err)
	}
	tab, err := advisory.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range tab.ForRuntime("runc") {
		if _, ok := s.Annotations[AnnotationPrefix+e.Key()]; !ok {
			t.Errorf("no annotation for %s in %v", e.Key(), s.Annotations)
		}
	}
	if v := s.Annotations[AnnotationPrefix+"runc-CVE-2024-21626"]; !strings.HasPrefix(v, "affected-exposed (high severity): runc at ") {
		t.Errorf("runc-CVE-2024-21626 = %q", v)
	}
}

// saysRuntimeResidual: one of the runtime step's residual lines names key
// and says want.
func saysRuntimeResidual(out, key, want string) bool {
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "agentbox: residual runtime: ") && strings.Contains(line, key) && strings.Contains(line, want) {
			return true
		}
	}
	return false
}
