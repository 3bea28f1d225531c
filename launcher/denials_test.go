package launcher

import (
	"reflect"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/agentbox/agentbox/denials"
	"github.com/agentbox/agentbox/engine"
	"github.com/agentbox/agentbox/policy"
	"github.com/agentbox/agentbox/seccomp/profiles"
)

// The denial log puts its notify rule and listener into a copy of the
// spec, the bundle's, and leaves the rendered spec, which the self-audit
// judges beside it, as it was rendered.
func TestDenialLogLeavesTheAuditedSpec(t *testing.T) {
	if err := denials.KernelSupport(); err != nil {
		t.Skipf("this kernel cannot carry the notification fd, so no listener starts: %v", err)
	}
	prof := profiles.Default()
	sc, err := prof.NativeOCI()
	if err != nil {
		t.Fatal(err)
	}
	rendered := &specs.Spec{Version: specs.Version, Linux: &specs.Linux{Seccomp: sc, CgroupsPath: "/agentbox/x"}, Hostname: "h"}
	dir, err := engine.CreateRunDir(shortDir(t, "abld-"), "run1")
	if err != nil {
		t.Fatal(err)
	}
	p := &prepared{planned: &planned{l: &launch{cfg: Config{Getenv: func(string) string { return "" }}}}, runDir: dir, spec: rendered}
	p.plan = &policy.Plan{Seccomp: prof.Name, Runtime: policy.Runtime{Name: "runc", Path: "/usr/sbin/runc"}}
	p.advice.rt.Version = "1.1.5"
	before := *sc
	if err := p.startDenialLog(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.denials.stop(nil) })
	if p.denials.listener == nil {
		t.Fatalf("no listener: %s", p.denials.off)
	}
	if p.spec != rendered || p.spec.Linux.Seccomp != sc || !reflect.DeepEqual(*sc, before) || sc.ListenerPath != "" {
		t.Errorf("the rendered spec's filter changed: %+v", p.spec.Linux.Seccomp)
	}
	b := p.bundleSpec()
	if b == rendered || b.Linux == rendered.Linux || b.Linux.Seccomp.ListenerPath != p.denials.listener.Path {
		t.Fatalf("the bundle's spec is not a copy with the listener: %+v", b.Linux.Seccomp)
	}
	if b.Hostname != "h" || b.Linux.CgroupsPath != "/agentbox/x" {
		t.Errorf("the bundle's spec lost the rendered one's fields: %+v", b)
	}
	last := b.Linux.Seccomp.Syscalls[len(b.Linux.Seccomp.Syscalls)-1]
	if last.Action != specs.ActNotify {
		t.Errorf("the bundle's filter ends in %+v, want the notify rule", last)
	}
}
