package netpolicy

import (
	"errors"
	"fmt"
	"os"
	"sort"

	"github.com/agentbox/agentbox/internal/yamlfile"
)

// LoadConfig reads a gateway config file (YAML, or JSON, which is YAML too).
// Unknown keys, values of the wrong shape and invalid values are errors that
// name the file, the line and the field ("gateway.yaml:7: limits.max_conns:
// must not be negative"); every problem is reported, one per line.
func LoadConfig(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read gateway config: %w", err)
	}
	return ParseConfig(path, b)
}

// ParseConfig is LoadConfig on bytes already read; name is used in errors.
// It decodes strictly (see internal/yamlfile: one document, known keys
// only, each once, no aliases), then validates. A config with no settings
// at all (an empty file, only comments, null or {}) is refused as empty.
func ParseConfig(name string, b []byte) (*Config, error) {
	var cfg Config
	lines, err := yamlfile.Decode(name, b, &cfg)
	if err != nil {
		return nil, err
	}
	if len(lines) == 0 {
		return nil, fmt.Errorf("%s: empty gateway config", name)
	}
	if err := cfg.Validate(); err != nil {
		return nil, locate(name, lines, err)
	}
	return &cfg, nil
}

// YAMLShape names a Duration's shape in messages about a wrong value.
func (Duration) YAMLShape() string { return "a duration with a unit, like 30s or 5m" }

// locate prefixes each FieldError in err with the file and the line of its
// field, and sorts them by line.
func locate(name string, lines yamlfile.Lines, err error) error {
	type located struct {
		line int
		err  error
	}
	var ls []located
	for _, e := range unjoin(err) {
		var fe *FieldError
		if !errors.As(e, &fe) {
			ls = append(ls, located{0, fmt.Errorf("%s: %w", name, e)})
			continue
		}
		line := lines.Line(fe.Field)
		if line == 0 {
			ls = append(ls, located{0, fmt.Errorf("%s: %w", name, e)})
			continue
		}
		ls = append(ls, located{line, fmt.Errorf("%s:%d: %w", name, line, e)})
	}
	sort.SliceStable(ls, func(i, j int) bool { return ls[i].line < ls[j].line })
	out := make([]error, len(ls))
	for i, l := range ls {
		out[i] = l.err
	}
	return errors.Join(out...)
}

func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}
