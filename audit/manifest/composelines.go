package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	. "github.com/agentbox/agentbox/audit"
)

// locator finds where a compose key is written. compose-go's project has no
// line numbers, so the files are parsed again with yaml.v3 and the effective
// key is looked up in them: the last file that sets it wins (as in a
// compose merge), merge keys (<<: *anchor) and aliases are followed to the
// anchor's lines, and `extends` and `include` are followed to other files.
type locator struct {
	files []*yamlFile          // the compose files in the order given
	cache map[string]*yamlFile // every parsed file by path
}

type yamlFile struct {
	path string
	docs []*yaml.Node // one document node per YAML document
}

// newLocator parses files. It always returns a usable locator (a file that
// does not parse contributes the documents before the error) and the first
// YAML error, an *InputError with the file and line.
func newLocator(files []string) (*locator, error) {
	l := &locator{cache: map[string]*yamlFile{}}
	var first error
	for _, f := range files {
		yf, err := l.parse(f)
		if err != nil && first == nil {
			first = err
		}
		if yf != nil {
			l.files = append(l.files, yf)
		}
	}
	return l, first
}

func (l *locator) parse(path string) (*yamlFile, error) {
	if yf, ok := l.cache[path]; ok {
		return yf, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, &InputError{File: path, Err: fmt.Errorf("read compose file: %w", err)}
	}
	yf := &yamlFile{path: path}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			l.cache[path] = yf
			return yf, &InputError{File: path, Line: yamlErrorLine(err.Error()), Err: fmt.Errorf("invalid YAML: %w", err)}
		}
		yf.docs = append(yf.docs, &n)
	}
	l.cache[path] = yf
	return yf, nil
}

var lineRE = regexp.MustCompile(`line (\d+)`)

// yamlErrorLine returns the last "line N" of a YAML error message (the
// place of the error rather than of the enclosing block), or 0.
func yamlErrorLine(msg string) int {
	m := lineRE.FindAllStringSubmatch(msg, -1)
	if len(m) == 0 {
		return 0
	}
	n, _ := strconv.Atoi(m[len(m)-1][1])
	return n
}

// service returns the mapping node of services.name in the last file (and
// document) that defines it, and that file.
func (l *locator) service(name string) (*yamlFile, *yaml.Node, *yaml.Node) {
	for i := len(l.files) - 1; i >= 0; i-- {
		if f, k, v := l.serviceIn(l.files[i], name, 0); v != nil {
			return f, k, v
		}
	}
	return nil, nil, nil
}

// serviceIn looks for services.name in yf and the files it includes.
func (l *locator) serviceIn(yf *yamlFile, name string, depth int) (*yamlFile, *yaml.Node, *yaml.Node) {
	if depth > 8 {
		return nil, nil, nil
	}
	for d := len(yf.docs) - 1; d >= 0; d-- {
		root := docRoot(yf.docs[d])
		if k, v := lookup(lookupValue(root, "services"), name); v != nil {
			return yf, k, v
		}
	}
	for _, inc := range includes(yf) {
		if next, _ := l.parse(inc); next != nil {
			if f, k, v := l.serviceIn(next, name, depth+1); v != nil {
				return f, k, v
			}
		}
	}
	return nil, nil, nil
}

// includes lists the files a compose file includes (include: short and
// long syntax), resolved against its directory.
func includes(yf *yamlFile) []string {
	var out []string
	for _, doc := range yf.docs {
		inc := resolveAlias(lookupValue(docRoot(doc), "include"))
		if inc == nil || inc.Kind != yaml.SequenceNode {
			continue
		}
		for _, item := range inc.Content {
			item = resolveAlias(item)
			if item.Kind == yaml.ScalarNode {
				out = append(out, relTo(yf.path, item.Value))
				continue
			}
			p := resolveAlias(lookupValue(item, "path"))
			if p != nil && p.Kind == yaml.ScalarNode {
				out = append(out, relTo(yf.path, p.Value))
			}
			if p != nil && p.Kind == yaml.SequenceNode {
				for _, s := range p.Content {
					out = append(out, relTo(yf.path, s.Value))
				}
			}
		}
	}
	return out
}

func relTo(file, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(filepath.Dir(file), p)
}

// serviceLocation is where the service is declared.
func (l *locator) serviceLocation(name string) Location {
	f, k, _ := l.service(name)
	if f == nil {
		return Location{}
	}
	return Location{File: f.path, Line: k.Line}
}

// key returns where services.svc.key is written, following extends.
func (l *locator) key(svc, key string) (Location, bool) {
	f, _, v := l.service(svc)
	return l.keyIn(f, v, key, 0)
}

func (l *locator) keyIn(f *yamlFile, svcNode *yaml.Node, key string, depth int) (Location, bool) {
	if f == nil || svcNode == nil || depth > 8 {
		return Location{}, false
	}
	if k, _ := lookup(svcNode, key); k != nil {
		return Location{File: f.path, Line: k.Line}, true
	}
	ef, ev := l.extended(f, svcNode)
	return l.keyIn(ef, ev, key, depth+1)
}

// item returns where an element of services.svc.key that match accepts is
// written (a sequence item or a mapping key), following extends.
func (l *locator) item(svc, key string, match func(k, v *yaml.Node) bool) (Location, bool) {
	f, _, v := l.service(svc)
	for depth := 0; f != nil && v != nil && depth < 8; depth++ {
		if _, coll := lookup(v, key); coll != nil {
			if n := findItem(resolveAlias(coll), match); n != nil {
				return Location{File: f.path, Line: n.Line}, true
			}
		}
		f, v = l.extended(f, v)
	}
	return Location{}, false
}

func findItem(coll *yaml.Node, match func(k, v *yaml.Node) bool) *yaml.Node {
	switch coll.Kind {
	case yaml.SequenceNode:
		for _, it := range coll.Content {
			if match(nil, resolveAlias(it)) {
				return it
			}
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(coll.Content); i += 2 {
			if match(coll.Content[i], resolveAlias(coll.Content[i+1])) {
				return coll.Content[i]
			}
		}
	default:
		// scalars, aliases and documents hold no items
	}
	return nil
}

// extended returns the service a service node extends, and its file.
func (l *locator) extended(f *yamlFile, svcNode *yaml.Node) (*yamlFile, *yaml.Node) {
	ext := resolveAlias(lookupValue(svcNode, "extends"))
	if ext == nil {
		return nil, nil
	}
	name, file := ext.Value, f
	if ext.Kind == yaml.MappingNode {
		name = scalar(lookupValue(ext, "service"))
		if p := scalar(lookupValue(ext, "file")); p != "" {
			next, _ := l.parse(relTo(f.path, p))
			if next == nil {
				return nil, nil
			}
			file = next
		}
	}
	ef, _, ev := l.serviceIn(file, name, 0)
	return ef, ev
}

// path returns where a dotted compose path (services.web.volumes.0) is
// written, for errors that name a path but no line.
func (l *locator) path(p string) Location {
	parts := strings.Split(p, ".")
	for i := len(l.files) - 1; i >= 0; i-- {
		for _, doc := range l.files[i].docs {
			if line := walk(docRoot(doc), parts); line > 0 {
				return Location{File: l.files[i].path, Line: line}
			}
		}
	}
	return Location{}
}

// walk follows parts down from n and returns the line of the deepest node
// reached, 0 when not even the first part exists.
func walk(n *yaml.Node, parts []string) int {
	line := 0
	for _, p := range parts {
		n = resolveAlias(n)
		if n == nil {
			break
		}
		var k, v *yaml.Node
		if idx, err := strconv.Atoi(p); err == nil && n.Kind == yaml.SequenceNode && idx < len(n.Content) {
			k, v = n.Content[idx], n.Content[idx]
		} else {
			k, v = lookup(n, p)
		}
		if k == nil {
			break
		}
		line, n = k.Line, v
	}
	return line
}

func docRoot(doc *yaml.Node) *yaml.Node {
	if doc != nil && doc.Kind == yaml.DocumentNode && len(doc.Content) > 0 {
		return doc.Content[0]
	}
	return doc
}

func resolveAlias(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 16; i++ {
		n = n.Alias
	}
	return n
}

func scalar(n *yaml.Node) string {
	if n = resolveAlias(n); n != nil && n.Kind == yaml.ScalarNode {
		return n.Value
	}
	return ""
}

func lookupValue(m *yaml.Node, key string) *yaml.Node {
	_, v := lookup(m, key)
	return v
}

// lookup finds key in mapping m: its own keys first, then the mappings
// merged into it with <<.
func lookup(m *yaml.Node, key string) (*yaml.Node, *yaml.Node) {
	m = resolveAlias(m)
	if m == nil || m.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key && m.Content[i].Tag != "!!merge" {
			return m.Content[i], m.Content[i+1]
		}
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Tag != "!!merge" {
			continue
		}
		for _, src := range mergeSources(m.Content[i+1]) {
			if k, v := lookup(src, key); k != nil {
				return k, v
			}
		}
	}
	return nil, nil
}

func mergeSources(v *yaml.Node) []*yaml.Node {
	v = resolveAlias(v)
	if v != nil && v.Kind == yaml.SequenceNode {
		return v.Content
	}
	return []*yaml.Node{v}
}
