package seccomp

import (
	"encoding/base64"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// CrunBPFAnnotation is crun's annotation for a seccomp filter compiled
// ahead: the base64 of a BPF program, which crun (0.17 and later) loads
// with seccomp(2) in place of compiling linux.seccomp with libseccomp,
// keeping only the section's flags and listenerPath. A spec that carries
// it runs, under crun, whatever filter it holds, whatever the section says.
const CrunBPFAnnotation = "run.oci.seccomp_bpf_data"

// CrunBPF is the value of CrunBPFAnnotation that loads p: the base64 of
// Compile(p).
func CrunBPF(p *specs.LinuxSeccomp) (string, error) {
	prog, err := Compile(p)
	if err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(prog.BPF), nil
}
