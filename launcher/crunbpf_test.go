package launcher

import (
	"bytes"
	"encoding/base64"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/agentbox/agentbox/engine"
	"github.com/agentbox/agentbox/seccomp"
	"github.com/agentbox/agentbox/seccomp/profiles"
)

// crun of a version that reads the annotation gets agentbox's own compile
// of the bundle's seccomp section, the notify rules of the denial log
// included; every other case keeps the section alone, for the runtime to
// compile, and the spec passed in is never changed.
func TestWithCompiledSeccomp(t *testing.T) {
	logged := profiles.Default().LoggedOCI(specs.ArchX86_64, "/run/agentbox/runs/x/denials.sock")
	want, err := seccomp.Compile(logged)
	if err != nil {
		t.Fatal(err)
	}
	spec := func(sc *specs.LinuxSeccomp, ann map[string]string) *specs.Spec {
		return &specs.Spec{Annotations: ann, Linux: &specs.Linux{Seccomp: sc}}
	}
	crun := engine.Runtime{Name: "crun", Version: "1.8.1"}

	in := spec(logged, map[string]string{"org.agentbox.run": "x"})
	out := withCompiledSeccomp(crun, in)
	got, err := base64.StdEncoding.DecodeString(out.Annotations[seccomp.CrunBPFAnnotation])
	if err != nil || !bytes.Equal(got, want.BPF) {
		t.Errorf("crun 1.8.1: the annotation holds %d bytes (%v), want the section's compile (%d bytes)", len(got), err, len(want.BPF))
	}
	if out.Annotations["org.agentbox.run"] != "x" || out.Linux.Seccomp != logged {
		t.Errorf("crun 1.8.1: the other annotations or the section were not kept: %v", out.Annotations)
	}
	if _, set := in.Annotations[seccomp.CrunBPFAnnotation]; set || len(in.Annotations) != 1 {
		t.Errorf("the spec passed in was changed: %v", in.Annotations)
	}

	uncovered := &specs.LinuxSeccomp{DefaultAction: specs.ActErrno, Architectures: []specs.Arch{specs.ArchS390X}}
	for name, tc := range map[string]struct {
		rt   engine.Runtime
		spec *specs.Spec
	}{
		"runc":                                  {engine.Runtime{Name: "runc", Version: "1.1.5+ds1"}, spec(logged, nil)},
		"crun before 0.17":                      {engine.Runtime{Name: "crun", Version: "0.16"}, spec(logged, nil)},
		"crun of no known version":              {engine.Runtime{Name: "crun"}, spec(logged, nil)},
		"no seccomp section":                    {crun, spec(nil, nil)},
		"an annotation already":                 {crun, spec(logged, map[string]string{seccomp.CrunBPFAnnotation: "AAAA"})},
		"a section the compiler does not cover": {crun, spec(uncovered, nil)},
	} {
		if out := withCompiledSeccomp(tc.rt, tc.spec); out != tc.spec {
			t.Errorf("%s: got a changed spec (annotations %v), want the same", name, out.Annotations)
		}
	}
}
