package engine

import (
	"encoding/base64"
	"maps"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/agentbox/agentbox/engine/advisory"
	"github.com/agentbox/agentbox/seccomp"
)

// CrunSeccompBPF is crun's annotation for a seccomp filter compiled ahead:
// the base64 of the BPF program, which crun loads with seccomp(2) in place
// of compiling linux.seccomp with libseccomp (crun 0.17 and later; crun's
// own compile of agentbox's profile costs about 4 ms of every start here,
// docs/bench.md, "A precompiled filter for crun"). crun then ignores the
// seccomp section but for its flags and listenerPath.
const CrunSeccompBPF = "run.oci.seccomp_bpf_data"

// crunTakesBPF is the first crun release that reads CrunSeccompBPF.
const crunTakesBPF = "0.17"

// withCompiledSeccomp returns s with its seccomp filter compiled ahead,
// for a runtime that takes one (crun of a known version), else s itself.
// The program is agentbox's own compile of s's section (package seccomp,
// whose tests hold its decisions equal to libseccomp's on every syscall and
// argument boundary), so the filter loaded is the one the self-audit
// judged. A section the compiler does not cover (another architecture, a
// syscall given two actions) is left to the runtime, as before; so is a
// spec that carries the annotation already.
func (r Runtime) withCompiledSeccomp(s *specs.Spec) *specs.Spec {
	if r.Name != "crun" || !advisory.AtLeast(r.Version, crunTakesBPF) || s.Linux == nil || s.Linux.Seccomp == nil {
		return s
	}
	if _, set := s.Annotations[CrunSeccompBPF]; set {
		return s
	}
	prog, err := seccomp.Compile(s.Linux.Seccomp)
	if err != nil {
		return s
	}
	cp := *s
	cp.Annotations = maps.Clone(s.Annotations)
	if cp.Annotations == nil {
		cp.Annotations = map[string]string{}
	}
	cp.Annotations[CrunSeccompBPF] = base64.StdEncoding.EncodeToString(prog.BPF)
	return &cp
}
