package policy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// InputError is bad user input: a policy file, a flag or a path. It names
// where the problem is and how to fix it. The CLI maps it to exit code 2.
type InputError struct {
	File  string // the policy file, or "" for flags
	Line  int    // 1-based line in File, or 0
	Field string // dotted field path (limits.memory) or flag name
	Msg   string // what is wrong
	Fix   string // how to fix it, or ""
}

func (e *InputError) Error() string {
	var b strings.Builder
	switch {
	case e.File != "" && e.Line > 0:
		fmt.Fprintf(&b, "%s:%d: ", e.File, e.Line)
	case e.File != "":
		fmt.Fprintf(&b, "%s: ", e.File)
	}
	if e.Field != "" {
		fmt.Fprintf(&b, "%s: ", e.Field)
	}
	b.WriteString(e.Msg)
	if e.Fix != "" {
		b.WriteString("; " + e.Fix)
	}
	return b.String()
}

// Source records where each field of a loaded Policy came from, so that a
// later validation error can still name the line.
type Source struct {
	File  string
	Lines map[string]int // dotted field path → line
}

func (s Source) errorf(field, fix, format string, args ...any) *InputError {
	return &InputError{File: s.File, Line: s.line(field), Field: field, Msg: fmt.Sprintf(format, args...), Fix: fix}
}

// line finds the line of field, or of its nearest parent when the field
// itself is missing from the file (a missing reason: the entry's line).
func (s Source) line(field string) int {
	for f := field; f != ""; {
		if l := s.Lines[f]; l > 0 {
			return l
		}
		i := strings.LastIndexAny(f, ".[")
		if i < 0 {
			break
		}
		f = f[:i]
	}
	return 0
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

// Parse decodes a policy document strictly: one YAML document, known keys
// only, the right type for every value. name is used in error messages.
func Parse(name string, data []byte) (Policy, Source, error) {
	src := Source{File: name, Lines: map[string]int{}}
	root, err := singleDocument(name, data)
	if err != nil || root == nil {
		return Policy{}, src, err
	}
	if err := checkKeys(src, root, reflect.TypeOf(Policy{}), ""); err != nil {
		return Policy{}, src, err
	}
	var p Policy
	if err := root.Decode(&p); err != nil {
		return Policy{}, src, yamlError(name, err)
	}
	return p, src, nil
}

// singleDocument parses data and rejects a stream of several documents.
func singleDocument(name string, data []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil // an empty file is the default policy
		}
		return nil, yamlError(name, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, yamlError(name, err)
		}
		return nil, &InputError{File: name, Line: extra.Line, Msg: "a second YAML document", Fix: "a policy file holds exactly one document; remove the '---' separator"}
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return nil, nil
	}
	if root.Kind != yaml.MappingNode {
		return nil, &InputError{File: name, Line: root.Line, Msg: "the policy must be a mapping of keys (workspace:, binds:, env:, limits:, runtime:, rootfs:, accept:, network:, gateway:)"}
	}
	return root, nil
}

// checkKeys walks a mapping node against a struct type, rejecting keys that
// the struct does not declare and recording the line of every field.
func checkKeys(src Source, n *yaml.Node, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t.Kind() == reflect.Struct && n.Kind == yaml.MappingNode:
		return checkMapping(src, n, t, path)
	case t.Kind() == reflect.Map && n.Kind == yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			p := joinPath(path, n.Content[i].Value)
			src.Lines[p] = n.Content[i].Line
			if err := checkKeys(src, n.Content[i+1], t.Elem(), p); err != nil {
				return err
			}
		}
	case t.Kind() == reflect.Slice && n.Kind == yaml.SequenceNode:
		for i, item := range n.Content {
			p := fmt.Sprintf("%s[%d]", path, i)
			src.Lines[p] = item.Line
			if err := checkKeys(src, item, t.Elem(), p); err != nil {
				return err
			}
		}
	default:
		return checkShape(src, n, t, path)
	}
	return nil
}

// checkShape rejects a value whose YAML shape is not the field's: a list
// where a mapping belongs, a word where a number belongs. The message names
// the field and the shape it wants, not a Go type.
func checkShape(src Source, n *yaml.Node, t reflect.Type, path string) error {
	want := shapeOf(t)
	bad := func() error {
		return &InputError{File: src.File, Line: n.Line, Field: path, Msg: fmt.Sprintf("expected %s, got %s", want, describeNode(n))}
	}
	if k := t.Kind(); k == reflect.Struct || k == reflect.Map || k == reflect.Slice {
		if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
			return nil // an empty value is the zero value
		}
		return bad()
	}
	if n.Kind != yaml.ScalarNode {
		return bad()
	}
	if err := n.Decode(reflect.New(t).Interface()); err != nil {
		return bad()
	}
	return nil
}

// shapeOf describes what a YAML value of type t looks like.
func shapeOf(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Struct:
		return "a mapping with " + strings.Join(sortedKeys(yamlFields(t)), ", ")
	case reflect.Map:
		return "a mapping of names to " + shapeOf(t.Elem())
	case reflect.Slice:
		return "a list of " + plural(shapeOf(t.Elem()))
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "a whole number"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number of 0 or more"
	default:
		return "a string"
	}
}

func plural(shape string) string {
	switch shape {
	case "a string":
		return "strings"
	case "a whole number":
		return "whole numbers"
	}
	return "items, each " + shape
}

func describeNode(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	default:
		return fmt.Sprintf("%q", n.Value)
	}
}

func checkMapping(src Source, n *yaml.Node, t reflect.Type, path string) error {
	fields := yamlFields(t)
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, val := n.Content[i], n.Content[i+1]
		p := joinPath(path, key.Value)
		f, ok := fields[key.Value]
		if !ok {
			return &InputError{
				File: src.File, Line: key.Line, Field: p,
				Msg: fmt.Sprintf("unknown key %q", key.Value),
				Fix: "known keys here: " + strings.Join(sortedKeys(fields), ", "),
			}
		}
		src.Lines[p] = key.Line
		if err := checkKeys(src, val, f.Type, p); err != nil {
			return err
		}
	}
	return nil
}

func yamlFields(t reflect.Type) map[string]reflect.StructField {
	out := map[string]reflect.StructField{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name != "" && name != "-" {
			out[name] = f
		}
	}
	return out
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

var yamlLine = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

// yamlError turns a yaml.v3 error into InputErrors naming file and line.
func yamlError(name string, err error) error {
	var te *yaml.TypeError
	msgs := []string{err.Error()}
	if errors.As(err, &te) {
		msgs = te.Errors
	}
	m := yamlLine.FindStringSubmatch(msgs[0])
	if m == nil {
		return &InputError{File: name, Msg: strings.TrimPrefix(msgs[0], "yaml: ")}
	}
	line, _ := strconv.Atoi(m[1])
	return &InputError{File: name, Line: line, Msg: m[2]}
}
