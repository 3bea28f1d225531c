package policy

import (
	"errors"
	"fmt"
	"os"

	"github.com/agentbox/agentbox/internal/yamlfile"
)

// InputError is bad user input: a policy file, a flag or a path. It names
// where the problem is and how to fix it. The CLI maps it to exit code 2.
// Its fields are those of yamlfile.Error, whose messages it takes over
// unchanged and whose "FILE:LINE: FIELD: MSG; FIX" form it prints.
type InputError struct {
	File  string // the policy file, or "" for flags
	Line  int    // 1-based line in File, or 0
	Field string // dotted field path (limits.memory) or flag name
	Msg   string // what is wrong
	Fix   string // how to fix it, or ""
}

func (e *InputError) Error() string { return (*yamlfile.Error)(e).Error() }

// Source records where each field of a loaded Policy came from, so that a
// later validation error can still name the line.
type Source struct {
	File  string
	Lines yamlfile.Lines // dotted field path → line
}

func (s Source) errorf(field, fix, format string, args ...any) *InputError {
	return &InputError{File: s.File, Line: s.Lines.Line(field), Field: field, Msg: fmt.Sprintf(format, args...), Fix: fix}
}

// LoadFile reads a policy file. A missing file is reported with
// errors.Is(err, fs.ErrNotExist).
func LoadFile(path string) (Policy, Source, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Policy{}, Source{File: path}, fmt.Errorf("read policy: %w", err)
	}
	return Parse(path, data)
}

// Parse decodes a policy document strictly (see internal/yamlfile): one
// YAML document, known keys only, each once, the right shape for every
// value. name is used in error messages. The error is an *InputError naming
// file, line and field of the first problem: the CLI reports bad input on
// one line.
func Parse(name string, data []byte) (Policy, Source, error) {
	var p Policy
	lines, err := yamlfile.Decode(name, data, &p)
	src := Source{File: name, Lines: lines}
	if err != nil {
		return Policy{}, src, firstInputError(err)
	}
	return p, src, nil
}

// firstInputError is the decoder's first problem as an InputError.
func firstInputError(err error) error {
	var first *yamlfile.Error
	if !errors.As(err, &first) {
		return err
	}
	return (*InputError)(first)
}
