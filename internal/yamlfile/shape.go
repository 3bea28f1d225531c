package yamlfile

import (
	"encoding"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Shaper is a type that says in words what a value of it looks like in a
// file ("a duration with a unit, like 30s or 5m"), for the messages about
// a value of the wrong shape. It is called on the zero value.
type Shaper interface {
	YAMLShape() string
}

var (
	shaperType    = reflect.TypeFor[Shaper]()
	unmarshalType = reflect.TypeFor[yaml.Unmarshaler]()
	textType      = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// decodesItself reports whether yaml hands a node to t's own method.
func decodesItself(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	return p.Implements(unmarshalType) || p.Implements(textType)
}

// wrongShape says what t wants and what n is instead. A type that reads
// itself from text and does not describe its shape speaks for itself.
func wrongShape(n *yaml.Node, t reflect.Type) string {
	if !reflect.PointerTo(t).Implements(shaperType) && n.Kind == yaml.ScalarNode {
		if u, ok := reflect.New(t).Interface().(encoding.TextUnmarshaler); ok {
			if err := u.UnmarshalText([]byte(n.Value)); err != nil {
				return err.Error()
			}
		}
	}
	return fmt.Sprintf("expected %s, got %s", shapeOf(t), describe(n))
}

// shapeOf describes what a YAML value of type t looks like.
func shapeOf(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if s, ok := reflect.New(t).Interface().(Shaper); ok {
		return s.YAMLShape()
	}
	switch t.Kind() {
	case reflect.Struct:
		return "a mapping with " + strings.Join(sortedNames(fieldsOf(t)), ", ")
	case reflect.Map:
		return "a mapping of names to " + shapeOf(t.Elem())
	case reflect.Slice:
		return "a list of " + plural(shapeOf(t.Elem()))
	case reflect.Array:
		return fmt.Sprintf("a list of %d %s", t.Len(), plural(shapeOf(t.Elem())))
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "a whole number"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "a whole number of 0 or more"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Interface:
		return "any value"
	default:
		return "a string"
	}
}

// plural turns "a string" into "strings"; other shapes become "items, each
// a mapping with …".
func plural(shape string) string {
	for _, a := range []string{"a string", "a whole number", "a number"} {
		if rest, ok := strings.CutPrefix(shape, a); ok {
			return a[2:] + "s" + rest
		}
	}
	return "items, each " + shape
}

// describe names what a node is, in the words of a message.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	case yaml.DocumentNode:
		return "a document"
	case yaml.ScalarNode:
		return quote(n.Value)
	default:
		return "an unknown kind of node"
	}
}

// fieldsOf maps the keys a struct type declares to their types, named as
// go.yaml.in/yaml/v3 names them.
func fieldsOf(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("yaml")
		name, opts, _ := strings.Cut(tag, ",")
		switch {
		case slices.Contains(strings.Split(opts, ","), "inline"):
			if f.Type.Kind() == reflect.Struct {
				maps.Copy(out, fieldsOf(f.Type))
			}
			continue // an inline map is not supported: its keys stay unknown
		case tag == "-", !f.IsExported():
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		out[name] = f.Type
	}
	return out
}

func sortedNames(m map[string]reflect.Type) []string {
	return slices.Sorted(maps.Keys(m))
}
