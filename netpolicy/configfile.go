package netpolicy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// LoadConfig reads a gateway config file (YAML, or JSON, which is YAML too).
// Unknown keys, type mismatches and invalid values are errors that name the
// file and line ("gateway.yaml:7: limits.max_conns: must not be negative").
func LoadConfig(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read gateway config: %w", err)
	}
	return ParseConfig(path, b)
}

// ParseConfig is LoadConfig on bytes already read; name is used in errors.
func ParseConfig(name string, b []byte) (*Config, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, fmt.Errorf("%s: empty gateway config", name)
	}
	var cfg Config
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err != nil {
		return nil, yamlError(name, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s:%d: only one YAML document is allowed", name, extra.Line)
	}
	if err := cfg.Validate(); err != nil {
		var root yaml.Node
		_ = yaml.Unmarshal(b, &root)
		return nil, locate(name, &root, err)
	}
	return &cfg, nil
}

var yamlLine = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

// yamlError rewrites yaml.v3's "line N: msg" errors as "file:N: msg".
func yamlError(name string, err error) error {
	var lines []string
	var te *yaml.TypeError
	if errors.As(err, &te) {
		lines = te.Errors
	} else {
		lines = []string{err.Error()}
	}
	var errs []error
	for _, l := range lines {
		if m := yamlLine.FindStringSubmatch(l); m != nil {
			msg := strings.Replace(m[2], "in type netpolicy.", "in ", 1)
			errs = append(errs, fmt.Errorf("%s:%s: %s", name, m[1], msg))
			continue
		}
		errs = append(errs, fmt.Errorf("%s: %s", name, strings.TrimPrefix(l, "yaml: ")))
	}
	return errors.Join(errs...)
}

// locate prefixes each FieldError in err with the file and the line of its
// field.
func locate(name string, root *yaml.Node, err error) error {
	type located struct {
		line int
		err  error
	}
	var ls []located
	for _, e := range unjoin(err) {
		var fe *FieldError
		if errors.As(e, &fe) {
			line := lineOf(root, fe.Field)
			ls = append(ls, located{line, fmt.Errorf("%s:%d: %w", name, line, e)})
			continue
		}
		ls = append(ls, located{0, fmt.Errorf("%s: %w", name, e)})
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

var fieldPart = regexp.MustCompile(`^([^\[]+)(?:\[(\d+)\])?$`)

// lineOf finds the line of a dotted field path ("upstreams.x.models[2]") in a
// YAML document, or of the deepest part of it that exists.
func lineOf(root *yaml.Node, field string) int {
	n := root
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	line := n.Line
	for _, part := range strings.Split(field, ".") {
		m := fieldPart.FindStringSubmatch(part)
		if m == nil || n.Kind != yaml.MappingNode {
			return line
		}
		next := mappingValue(n, m[1])
		if next == nil {
			return line
		}
		line, n = next.Line, next
		if m[2] != "" {
			i, _ := strconv.Atoi(m[2])
			if n.Kind != yaml.SequenceNode || i >= len(n.Content) {
				return line
			}
			n = n.Content[i]
			line = n.Line
		}
	}
	return line
}

func mappingValue(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			if m.Content[i+1].Kind == yaml.ScalarNode {
				return m.Content[i+1]
			}
			// point at the key line for a block, not its first child
			v := *m.Content[i+1]
			v.Line = m.Content[i].Line
			return &v
		}
	}
	return nil
}
