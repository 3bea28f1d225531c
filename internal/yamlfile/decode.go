package yamlfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Lines maps the dotted path of every field, map entry and list item read
// from a file (limits.memory, upstreams.local, accept[0]) to its 1-based
// line: a key's line for fields and entries, the item's own line for list
// items.
type Lines map[string]int

// Line is the line of field, or of its nearest parent in the file when the
// field itself is not there (a missing reason: the line of its entry). It
// is 0 when neither is.
func (l Lines) Line(field string) int {
	for f := field; f != ""; {
		if n := l[f]; n > 0 {
			return n
		}
		i := strings.LastIndexAny(f, ".[")
		if i < 0 {
			break
		}
		f = f[:i]
	}
	return 0
}

// Decode reads data, the contents of the file called name, into out, which
// must be a non-nil pointer. It checks the whole document against out's type
// first (see the package comment) and decodes only when nothing is wrong;
// out is then as go.yaml.in/yaml/v3 fills it. An empty document leaves out
// as it was.
//
// The error is nil or Errors (at most MaxErrors of them, and one saying
// how many more), each naming the file and, where known, line and field.
// Lines is never nil.
func Decode(name string, data []byte, out any) (Lines, error) {
	lines := Lines{}
	v := reflect.ValueOf(out)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return lines, fmt.Errorf("yamlfile: decode %s into %T: want a non-nil pointer", name, out)
	}
	root, errs := document(name, data)
	if errs != nil || root == nil {
		return lines, errs.orNil()
	}
	w := &walker{file: name, lines: lines}
	w.walk(root, v.Type().Elem(), "")
	if len(w.errs) > 0 {
		return lines, w.result()
	}
	if err := root.Decode(out); err != nil {
		return lines, fromYAML(name, err)
	}
	return lines, nil
}

// orNil keeps a nil Errors from becoming a non-nil error.
func (es Errors) orNil() error {
	if len(es) == 0 {
		return nil
	}
	return es
}

// document parses data as exactly one YAML document and returns its root,
// or nil for an empty document.
func document(name string, data []byte) (*yaml.Node, Errors) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, fromYAML(name, err)
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == nil:
		return nil, Errors{{
			File: name, Line: extra.Line, Msg: "a second YAML document",
			Fix: "this file holds exactly one document; remove the '---' separator and what follows it, or merge the two",
		}}
	case !errors.Is(err, io.EOF):
		return nil, fromYAML(name, err)
	}
	if len(doc.Content) == 0 || isNull(doc.Content[0]) {
		return nil, nil
	}
	return doc.Content[0], nil
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// walker checks a node tree against a Go type, recording lines and
// collecting problems.
type walker struct {
	file  string
	lines Lines
	errs  Errors
	more  int // problems past MaxErrors
}

func (w *walker) fail(line int, path, fix, format string, args ...any) {
	if len(w.errs) == MaxErrors {
		w.more++
		return
	}
	w.errs = append(w.errs, &Error{File: w.file, Line: line, Field: printable(path), Msg: fmt.Sprintf(format, args...), Fix: fix})
}

func (w *walker) result() Errors {
	if w.more > 0 {
		return append(w.errs, &Error{File: w.file, Msg: fmt.Sprintf("%d more problems not shown", w.more), Fix: "fix the ones above first"})
	}
	return w.errs
}

// walk checks n against t. A null is the zero value of any type; a type
// that decodes itself is decoded to see whether it takes n.
func (w *walker) walk(n *yaml.Node, t reflect.Type, path string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case n.Kind == yaml.AliasNode:
		w.fail(n.Line, path, "write the value out in full where it is used", "alias *%s: aliases are not read in this file", n.Value)
	case isNull(n), t.Kind() == reflect.Interface:
		// the zero value; any value at all for an interface
	case decodesItself(t):
		w.scalar(n, t, path)
	case t.Kind() == reflect.Struct && n.Kind == yaml.MappingNode:
		w.fields(n, t, path)
	case t.Kind() == reflect.Map && n.Kind == yaml.MappingNode:
		w.entries(n, t, path)
	case (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) && n.Kind == yaml.SequenceNode:
		w.items(n, t, path)
	default:
		w.scalar(n, t, path)
	}
}

// scalar checks that n decodes into a t, and names the shape t wants when
// it does not.
func (w *walker) scalar(n *yaml.Node, t reflect.Type, path string) {
	if n.Kind == yaml.ScalarNode || decodesItself(t) {
		if err := n.Decode(reflect.New(t).Interface()); err == nil {
			return
		}
	}
	w.fail(n.Line, path, "", "%s", wrongShape(n, t))
}

// fields checks a mapping against the fields of struct type t.
func (w *walker) fields(n *yaml.Node, t reflect.Type, path string) {
	known := fieldsOf(t)
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, val := n.Content[i], n.Content[i+1]
		if !w.key(key, seen, path) {
			continue
		}
		p := join(path, key.Value)
		ft, ok := known[key.Value]
		if !ok {
			w.fail(key.Line, p, "known keys here: "+strings.Join(sortedNames(known), ", "), "unknown key %s", quote(key.Value))
			continue
		}
		w.lines[p] = key.Line
		w.walk(val, ft, p)
	}
}

// entries checks a mapping against map type t.
func (w *walker) entries(n *yaml.Node, t reflect.Type, path string) {
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, val := n.Content[i], n.Content[i+1]
		if !w.key(key, seen, path) {
			continue
		}
		p := join(path, key.Value)
		if t.Key().Kind() != reflect.String {
			w.walk(key, t.Key(), p)
		}
		w.lines[p] = key.Line
		w.walk(val, t.Elem(), p)
	}
}

// items checks a sequence against slice or array type t.
func (w *walker) items(n *yaml.Node, t reflect.Type, path string) {
	if t.Kind() == reflect.Array && len(n.Content) != t.Len() {
		w.fail(n.Line, path, "", "expected %s, got a list of %d", shapeOf(t), len(n.Content))
		return
	}
	for i, item := range n.Content {
		p := fmt.Sprintf("%s[%d]", path, i)
		w.lines[p] = item.Line
		w.walk(item, t.Elem(), p)
	}
}

// key checks one mapping key: a plain name, not a merge, not seen before in
// this mapping.
func (w *walker) key(key *yaml.Node, seen map[string]int, path string) bool {
	switch {
	case key.Kind == yaml.AliasNode:
		w.fail(key.Line, path, "write the key out", "alias *%s as a key: aliases are not read in this file", key.Value)
		return false
	case key.Kind != yaml.ScalarNode:
		w.fail(key.Line, path, "", "expected a key name, got %s", describe(key))
		return false
	case key.ShortTag() == "!!merge":
		w.fail(key.Line, join(path, key.Value), "write the keys out in this mapping", "merge keys are not read in this file")
		return false
	}
	if first, ok := seen[key.Value]; ok {
		w.fail(key.Line, join(path, key.Value), "keep one of them", "duplicate key %s, first given on line %d", quote(key.Value), first)
		return false
	}
	seen[key.Value] = key.Line
	return true
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
