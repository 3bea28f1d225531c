package seccomp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/agentbox/agentbox/seccomp/profiles"
)

// Target is the container a Docker profile is resolved for. Docker profiles
// hold conditional rules ("includes"/"excludes" by capability, architecture
// and kernel) that Docker resolves when it creates a container.
type Target struct {
	// Arch is the container's native architecture; "" means the
	// architecture of this binary.
	Arch specs.Arch
	// Caps is the container's bounding capability set (CAP_SYS_ADMIN, ...);
	// nil means none, as in agentbox's sandbox.
	Caps []string
	// Kernel is the host kernel; the zero value means a kernel at least as
	// new as any minKernel in the file.
	Kernel profiles.Version
}

// FileError is a problem in a seccomp profile file.
type FileError struct {
	Path  string
	Line  int    // 0 when unknown
	Field string // JSON path such as syscalls[3].action; "" when unknown
	Err   error
}

// Error reads "seccomp profile FILE:LINE: field FIELD: problem".
func (e *FileError) Error() string {
	var b strings.Builder
	b.WriteString("seccomp profile " + e.Path)
	if e.Line > 0 {
		b.WriteString(":" + strconv.Itoa(e.Line))
	}
	if e.Field != "" {
		b.WriteString(": field " + e.Field)
	}
	b.WriteString(": " + e.Err.Error())
	return b.String()
}

// Unwrap returns the underlying problem.
func (e *FileError) Unwrap() error { return e.Err }

// LoadFile reads a Docker, Podman or OCI seccomp JSON profile and resolves it
// for a container like agentbox's: native architecture, no capabilities, a
// current kernel. Errors are *FileError values naming the file, the line
// where known, and the field.
func LoadFile(path string) (*specs.LinuxSeccomp, error) {
	return LoadFileFor(path, Target{})
}

// LoadFileFor is LoadFile for the container described by t.
func LoadFileFor(path string, t Target) (*specs.LinuxSeccomp, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &FileError{Path: path, Err: err}
	}
	return Parse(path, data, t)
}

// Parse is LoadFileFor on data already read; name is used in errors.
func Parse(name string, data []byte, t Target) (*specs.LinuxSeccomp, error) {
	var f dockerProfile
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, decodeError(name, data, dec, err)
	}
	if dec.More() {
		return nil, &FileError{Path: name, Line: lineAt(data, dec.InputOffset()), Err: errors.New("unexpected data after the profile object")}
	}
	if err := f.check(); err != nil {
		err.Path = name
		return nil, err
	}
	return f.resolve(name, t)
}

func decodeError(name string, data []byte, dec *json.Decoder, err error) error {
	fe := &FileError{Path: name, Err: err}
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		fe.Line = lineAt(data, syn.Offset)
		fe.Err = fmt.Errorf("invalid JSON: %w", err)
	case errors.As(err, &typ):
		fe.Line, fe.Field = lineAt(data, typ.Offset), typ.Field
		fe.Err = fmt.Errorf("got a JSON %s, want %s", typ.Value, typ.Type)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		fe.Line = lineAt(data, dec.InputOffset())
		fe.Err = fmt.Errorf("unknown field %s (a Docker or OCI seccomp profile has defaultAction, "+
			"defaultErrnoRet, architectures, archMap, flags and syscalls)", strings.TrimPrefix(err.Error(), "json: unknown field "))
	}
	return fe
}

func lineAt(data []byte, offset int64) int {
	if offset < 0 || offset > int64(len(data)) {
		return 0
	}
	return bytes.Count(data[:offset], []byte("\n")) + 1
}

// dockerProfile is the JSON layout Docker and Podman read; the OCI layout
// is a subset of it.
type dockerProfile struct {
	DefaultAction    specs.LinuxSeccompAction `json:"defaultAction"`
	DefaultErrnoRet  *uint                    `json:"defaultErrnoRet"`
	Architectures    []specs.Arch             `json:"architectures"`
	ArchMap          []dockerArch             `json:"archMap"`
	Flags            []specs.LinuxSeccompFlag `json:"flags"`
	ListenerPath     string                   `json:"listenerPath"`
	ListenerMetadata string                   `json:"listenerMetadata"`
	Syscalls         []dockerSyscall          `json:"syscalls"`
}

type dockerArch struct {
	Arch      specs.Arch   `json:"architecture"`
	SubArches []specs.Arch `json:"subArchitectures"`
}

type dockerSyscall struct {
	Name     string                   `json:"name"`
	Names    []string                 `json:"names"`
	Action   specs.LinuxSeccompAction `json:"action"`
	ErrnoRet *uint                    `json:"errnoRet"`
	Args     []specs.LinuxSeccompArg  `json:"args"`
	Comment  string                   `json:"comment"`
	Includes *dockerFilter            `json:"includes"`
	Excludes *dockerFilter            `json:"excludes"`
}

type dockerFilter struct {
	Caps      []string `json:"caps"`
	Arches    []string `json:"arches"`
	MinKernel string   `json:"minKernel"`
}
