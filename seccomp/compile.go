package seccomp

import (
	"errors"
	"fmt"
	"strings"
)

// ErrUnknownSyscall marks a name the linked libseccomp cannot resolve: a
// typo, or a syscall newer than the library. runc and crun skip such names,
// leaving the syscall to the default action.
var ErrUnknownSyscall = errors.New("syscall name not known")

// ErrNotOnArch marks a name libseccomp knows but the architecture lacks
// (open on arm64, for example).
var ErrNotOnArch = errors.New("no such syscall")

// errnoEPERM is the errno of SCMP_ACT_ERRNO and SCMP_ACT_TRACE when a
// profile gives none, as in runc.
const errnoEPERM = 1

// sockFilterSize is the size of one classic BPF instruction (struct
// sock_filter: u16 code, u8 jt, u8 jf, u32 k).
const sockFilterSize = 8

// Program is a profile compiled to classic BPF.
type Program struct {
	// BPF is the program as the kernel loads it (struct sock_filter array,
	// native byte order).
	BPF []byte
	// Instructions is the number of BPF instructions; the kernel accepts at
	// most 4096 per filter.
	Instructions int
	// Skipped lists the names libseccomp could not resolve (the linked one
	// for CompileLibseccomp, the one zsyscalls.go was generated from for
	// Compile); the program leaves those syscalls to the default action.
	Skipped []string
}

// Problem is one thing Validate found wrong.
type Problem struct {
	// Rule is the index in Syscalls, or -1 for the profile's own fields.
	Rule int
	// Name is the syscall concerned, if any.
	Name string
	// Field is the JSON field: names, action, args[0], architectures, ...
	Field string
	// Err is the problem; errors.Is it against ErrUnknownSyscall and
	// ErrNotOnArch to tell name problems apart.
	Err error
}

// String reads "syscalls[I].FIELD "NAME": problem".
func (p Problem) String() string {
	var b strings.Builder
	if p.Rule >= 0 {
		fmt.Fprintf(&b, "syscalls[%d].", p.Rule)
	}
	b.WriteString(p.Field)
	if p.Name != "" {
		fmt.Fprintf(&b, " %q", p.Name)
	}
	b.WriteString(": " + p.Err.Error())
	return b.String()
}

// ValidationError lists every problem Validate found.
type ValidationError struct {
	Problems []Problem
}

// Error reads "invalid seccomp profile: N problems: first; second; ...".
func (e *ValidationError) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = p.String()
	}
	return fmt.Sprintf("invalid seccomp profile: %d problem(s): %s", len(parts), strings.Join(parts, "; "))
}

// Unwrap returns the problems' errors, for errors.Is.
func (e *ValidationError) Unwrap() []error {
	out := make([]error, len(e.Problems))
	for i, p := range e.Problems {
		out[i] = p.Err
	}
	return out
}
