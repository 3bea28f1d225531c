package launcher

import (
	"maps"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/agentbox/agentbox/engine"
	"github.com/agentbox/agentbox/engine/advisory"
	"github.com/agentbox/agentbox/seccomp"
)

// crunTakesBPF is the first crun release that reads
// seccomp.CrunBPFAnnotation.
const crunTakesBPF = "0.17"

// withCompiledSeccomp returns s, the spec of the bundle as written, with
// its seccomp filter compiled ahead (seccomp.CrunBPFAnnotation), for a
// runtime r that takes one: crun of a known version, which then loads it
// instead of compiling the section with libseccomp at every start (about
// 4 ms of crun's run here, docs/bench.md, "A precompiled filter for
// crun"); else s itself. As the gVisor filter (compileSentryFilter), it is
// compiled from the spec the bundle gets, after every change to it. The
// program is agentbox's own compile of s's section (package seccomp, whose
// tests hold its decisions equal to libseccomp's on every syscall and
// argument boundary), so the filter loaded is the one the self-audit
// judged. A section the compiler does not cover (another architecture, a
// syscall given two actions) is left to the runtime, as before; so is a
// spec that carries the annotation already.
func withCompiledSeccomp(r engine.Runtime, s *specs.Spec) *specs.Spec {
	if r.Name != "crun" || !advisory.AtLeast(r.Version, crunTakesBPF) || s.Linux == nil || s.Linux.Seccomp == nil {
		return s
	}
	if _, set := s.Annotations[seccomp.CrunBPFAnnotation]; set {
		return s
	}
	bpf, err := seccomp.CrunBPF(s.Linux.Seccomp)
	if err != nil {
		return s
	}
	cp := *s
	cp.Annotations = maps.Clone(s.Annotations)
	if cp.Annotations == nil {
		cp.Annotations = map[string]string{}
	}
	cp.Annotations[seccomp.CrunBPFAnnotation] = bpf
	return &cp
}
