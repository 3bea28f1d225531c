package profiles

import (
	"bytes"
	"encoding/json"
	"fmt"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

//go:generate go run ./internal/gen

// fileProfile is the JSON layout of a generated profile file. It is the
// runtime-spec LinuxSeccomp layout plus a "comment" per rule, which Docker's
// profile loader reads and runc and crun ignore.
type fileProfile struct {
	DefaultAction   specs.LinuxSeccompAction `json:"defaultAction"`
	DefaultErrnoRet *uint                    `json:"defaultErrnoRet,omitempty"`
	Architectures   []specs.Arch             `json:"architectures"`
	Syscalls        []fileSyscall            `json:"syscalls"`
}

type fileSyscall struct {
	Names    []string                 `json:"names"`
	Action   specs.LinuxSeccompAction `json:"action"`
	ErrnoRet *uint                    `json:"errnoRet,omitempty"`
	Args     []specs.LinuxSeccompArg  `json:"args,omitempty"`
	Comment  string                   `json:"comment"`
}

// FileName is the name of the generated profile file for arch, for example
// "agentbox-amd64.json".
func (p Profile) FileName(arch specs.Arch) string {
	return fmt.Sprintf("%s-%s.json", p.Name, GOARCH(arch))
}

// JSON renders p for arch as a seccomp profile file that
// `docker run --security-opt seccomp=FILE`, compose's security_opt and an
// OCI config.json's linux.seccomp all accept. Each rule carries its reason
// and minimum kernel in "comment". The output is deterministic.
func (p Profile) JSON(arch specs.Arch) ([]byte, error) {
	if GOARCH(arch) == "" {
		return nil, fmt.Errorf("render seccomp profile %s: no profile for architecture %q", p.Name, arch)
	}
	oci := p.OCI(arch)
	out := fileProfile{
		DefaultAction:   oci.DefaultAction,
		DefaultErrnoRet: oci.DefaultErrnoRet,
		Architectures:   oci.Architectures,
	}
	i := 0
	for _, r := range p.Rules {
		if !r.AppliesTo(arch) {
			continue
		}
		s := oci.Syscalls[i]
		i++
		out.Syscalls = append(out.Syscalls, fileSyscall{
			Names: s.Names, Action: s.Action, ErrnoRet: s.ErrnoRet, Args: s.Args,
			Comment: r.comment(),
		})
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "\t")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return nil, fmt.Errorf("render seccomp profile %s: %w", p.Name, err)
	}
	return buf.Bytes(), nil
}

func (r Rule) comment() string {
	c := r.Reason + " Needs Linux " + r.MinKernel.String()
	if !r.MinLibseccomp.IsZero() {
		c += " and libseccomp " + r.MinLibseccomp.String()
	}
	return c + "."
}
