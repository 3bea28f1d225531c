package yamlfile

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"
)

// testDoc has a field of every shape the walker knows.
type testDoc struct {
	Name    string               `yaml:"name"`
	Count   int                  `yaml:"count"`
	Size    uint64               `yaml:"size"`
	Enabled bool                 `yaml:"enabled"`
	Ratio   float64              `yaml:"ratio"`
	Wait    testDuration         `yaml:"wait"`
	Level   testLevel            `yaml:"level"`
	Tags    []string             `yaml:"tags"`
	Counts  []int                `yaml:"counts"`
	Pair    [2]int               `yaml:"pair"`
	Limits  testLimits           `yaml:"limits"`
	Opt     *testLimits          `yaml:"opt"`
	Routes  map[string]testRoute `yaml:"routes"`
	Rules   []testRule           `yaml:"rules"`
	Any     any                  `yaml:"any"`
	Plain   string               // named "plain", as yaml names it
	Secret  string               `yaml:"-"`
	Inlined `yaml:",inline"`
}

// Inlined is exported only so that go-cmp can compare it.
type Inlined struct {
	Extra string `yaml:"extra"`
}

type testLimits struct {
	Memory string `yaml:"memory"`
	Pids   int64  `yaml:"pids"`
}

type testRoute struct {
	URL  string `yaml:"url"`
	Auth string `yaml:"auth"`
}

type testRule struct {
	Code   string `yaml:"code"`
	Reason string `yaml:"reason"`
}

// testDuration decodes itself and names its shape, as netpolicy.Duration.
type testDuration time.Duration

func (d *testDuration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		return err
	}
	*d = testDuration(v)
	return nil
}

func (testDuration) YAMLShape() string { return "a duration with a unit, like 30s or 5m" }

// testLevel reads itself from text and does not name its shape.
type testLevel string

func (l *testLevel) UnmarshalText(b []byte) error {
	if s := string(b); s == "low" || s == "high" {
		*l = testLevel(s)
		return nil
	}
	return fmt.Errorf("level %q: want low or high", b)
}

const topKeys = "any, count, counts, enabled, extra, level, limits, name, opt, pair, plain, ratio, routes, rules, size, tags, wait"

// TestDecodeErrors: every refusal names file, line and field, and says in
// words what is wrong and, where it can, what is wanted.
func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name, doc, want string
	}{
		// unknown keys
		{"unknown key", "name: a\nnmae: b\n", `t.yaml:2: nmae: unknown key "nmae"; known keys here: ` + topKeys},
		{"nested unknown key", "limits:\n  memory: 1GiB\n  swap: 2GiB\n", `t.yaml:3: limits.swap: unknown key "swap"; known keys here: memory, pids`},
		{"unknown key in a list item", "rules:\n  - code: a\n  - code: b\n    until: never\n", `t.yaml:4: rules[1].until: unknown key "until"; known keys here: code, reason`},
		{"unknown key in a map entry", "routes:\n  local:\n    url: http://x\n    api_key: sk\n", `t.yaml:4: routes.local.api_key: unknown key "api_key"; known keys here: auth, url`},
		{"unknown key under a pointer", "opt:\n  cpu: 1\n", `t.yaml:2: opt.cpu: unknown key "cpu"; known keys here: memory, pids`},
		{"a field yaml skips", "Secret: x\n", `t.yaml:1: Secret: unknown key "Secret"; known keys here: ` + topKeys},

		// wrong shapes
		{"word for a number", "limits:\n  pids: many\n", `t.yaml:2: limits.pids: expected a whole number, got "many"`},
		{"negative for unsigned", "size: -1\n", `t.yaml:1: size: expected a whole number of 0 or more, got "-1"`},
		{"word for a bool", "enabled: yes please\n", `t.yaml:1: enabled: expected true or false, got "yes please"`},
		{"word for a float", "ratio: half\n", `t.yaml:1: ratio: expected a number, got "half"`},
		{"list for a string", "name: [a]\n", "t.yaml:1: name: expected a string, got a list"},
		{"mapping for a string", "name: {a: 1}\n", "t.yaml:1: name: expected a string, got a mapping"},
		{"scalar for a list", "tags: HOME\n", `t.yaml:1: tags: expected a list of strings, got "HOME"`},
		{"word in a list of numbers", "counts: [1, x]\n", `t.yaml:1: counts[1]: expected a whole number, got "x"`},
		{"list too short for an array", "pair: [1]\n", "t.yaml:1: pair: expected a list of 2 whole numbers, got a list of 1"},
		{"scalar for a mapping", "limits: lots\n", `t.yaml:1: limits: expected a mapping with memory, pids, got "lots"`},
		{"list for a mapping", "limits: [1GiB]\n", "t.yaml:1: limits: expected a mapping with memory, pids, got a list"},
		{"list for a map", "routes: [a]\n", "t.yaml:1: routes: expected a mapping of names to a mapping with auth, url, got a list"},
		{"scalar for a list of mappings", "rules: x\n", `t.yaml:1: rules: expected a list of items, each a mapping with code, reason, got "x"`},
		{"bad value of a type that names its shape", "wait: forever\n", `t.yaml:1: wait: expected a duration with a unit, like 30s or 5m, got "forever"`},
		{"list for a type that names its shape", "wait: [1s]\n", "t.yaml:1: wait: expected a duration with a unit, like 30s or 5m, got a list"},
		{"bad value of a text type", "level: mid\n", `t.yaml:1: level: level "mid": want low or high`},
		{"the document is not a mapping", "- a\n", "t.yaml:1: expected a mapping with " + topKeys + ", got a list"},
		{"the document is a word", "hello\n", `t.yaml:1: expected a mapping with ` + topKeys + `, got "hello"`},

		// one document, one value per key, no aliases
		{"second document", "name: a\n---\nname: b\n", "t.yaml:2: a second YAML document; this file holds exactly one document; remove the '---' separator and what follows it, or merge the two"},
		{"empty second document", "name: a\n---\n", "t.yaml:2: a second YAML document"},
		{"duplicate key", "name: a\ncount: 1\nname: b\n", `t.yaml:3: name: duplicate key "name", first given on line 1; keep one of them`},
		{"duplicate nested key", "limits:\n  pids: 1\n  pids: 2\n", `t.yaml:3: limits.pids: duplicate key "pids", first given on line 2`},
		{"duplicate map entry", "routes:\n  a: {url: x}\n  a: {url: y}\n", `t.yaml:3: routes.a: duplicate key "a", first given on line 2`},
		{"duplicate key in JSON", `{"name": "a", "name": "b"}`, `t.yaml:1: name: duplicate key "name", first given on line 1`},
		{"alias", "name: &n a\nextra: *n\n", "t.yaml:2: extra: alias *n: aliases are not read in this file; write the value out in full where it is used"},
		{"alias of a mapping", "limits: &l {pids: 1}\nopt: *l\n", "t.yaml:2: opt: alias *l: aliases are not read in this file"},
		{"merge key", "limits:\n  <<: {pids: 1}\n", "t.yaml:2: limits.<<: merge keys are not read in this file; write the keys out in this mapping"},
		{"merge key in a map", "routes:\n  <<: {a: {url: x}}\n", "t.yaml:2: routes.<<: merge keys are not read in this file; write the keys out in this mapping"},
		{"a list as a key", "? [a]\n: 1\n", "t.yaml:1: expected a key name, got a list"},

		// what the message repeats from the file is quoted and bounded
		{"control characters in a key", "\"a\\e[31mb\": 1\n", `t.yaml:1: "a\x1b[31mb": unknown key "a\x1b[31mb"`},
		{"a long value", "count: " + strings.Repeat("x", 100) + "\n", `t.yaml:1: count: expected a whole number, got "` + strings.Repeat("x", maxShown) + `"…`},

		// yaml's own syntax errors keep their line
		{"broken flow list", "name: a\nlimits: [\n", "t.yaml:2: did not find expected node content"},
		{"tab indentation", "limits:\n\tpids: 1\n", "t.yaml:2: found character that cannot start any token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d testDoc
			_, err := Decode("t.yaml", []byte(tt.doc), &d)
			var es Errors
			if !errors.As(err, &es) {
				t.Fatalf("Decode(%q) = %v, want Errors", tt.doc, err)
			}
			if !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("Decode(%q):\n got %s\nwant %s", tt.doc, err, tt.want)
			}
			if !cmp.Equal(d, testDoc{}) {
				t.Errorf("a refused document still filled the struct: %+v", d)
			}
		})
	}
}

// TestDecodeErrorsAll: the walk reports every problem, in line order, each
// one an *Error, and stops listing them after MaxErrors.
func TestDecodeErrorsAll(t *testing.T) {
	_, err := Decode("t.yaml", []byte("nmae: a\nlimits:\n  pids: x\ntags: y\n"), &testDoc{})
	want := `t.yaml:1: nmae: unknown key "nmae"; known keys here: ` + topKeys + "\n" +
		`t.yaml:3: limits.pids: expected a whole number, got "x"` + "\n" +
		`t.yaml:4: tags: expected a list of strings, got "y"`
	if err == nil || err.Error() != want {
		t.Errorf("got\n%v\nwant\n%s", err, want)
	}
	var one *Error
	if !errors.As(err, &one) || one.Line != 1 || one.Field != "nmae" {
		t.Errorf("errors.As *Error = %+v", one)
	}

	var doc strings.Builder
	for i := range MaxErrors + 3 {
		fmt.Fprintf(&doc, "bad%d: 1\n", i)
	}
	_, err = Decode("t.yaml", []byte(doc.String()), &testDoc{})
	var es Errors
	if !errors.As(err, &es) || len(es) != MaxErrors+1 {
		t.Fatalf("%d unknown keys: %d errors, want %d and a count", MaxErrors+3, len(es), MaxErrors)
	}
	if last := es[MaxErrors].Error(); last != "t.yaml: 3 more problems not shown; fix the ones above first" {
		t.Errorf("last error %q", last)
	}
}

// TestDecodeEmpty: an empty document is the zero value, not an error.
func TestDecodeEmpty(t *testing.T) {
	for _, doc := range []string{"", "\n\n", "# only a comment\n", "~\n", "null\n", "---\n", "---\n...\n"} {
		d := testDoc{Name: "kept"}
		lines, err := Decode("t.yaml", []byte(doc), &d)
		if err != nil || d.Name != "kept" || lines == nil || len(lines) != 0 {
			t.Errorf("Decode(%q) = %+v, %v, %v; want nothing changed", doc, d, lines, err)
		}
	}
}

// TestDecodeNulls: a field given no value is its zero value, and its line
// is still known.
func TestDecodeNulls(t *testing.T) {
	doc := "name:\ncount: ~\nwait: null\nlimits:\ntags: null\nopt:\nroutes:\n  a:\nrules:\n  -\n"
	var d testDoc
	lines, err := Decode("t.yaml", []byte(doc), &d)
	if err != nil {
		t.Fatal(err)
	}
	// yaml drops a null list item: the list is there, and empty
	want := testDoc{Routes: map[string]testRoute{"a": {}}, Rules: []testRule{}}
	if diff := cmp.Diff(want, d); diff != "" {
		t.Errorf("decoded (-want +got):\n%s", diff)
	}
	if lines["tags"] != 5 || lines["routes.a"] != 8 || lines["rules[0]"] != 10 {
		t.Errorf("lines %v", lines)
	}
}

// TestDecodeLines: every field, entry and item has its line; a missing
// field is placed at its nearest parent.
func TestDecodeLines(t *testing.T) {
	doc := `name: a
limits:
  pids: 3
routes:
  local:
    url: http://127.0.0.1:8080
rules:
  - code: x
    reason: y
tags: [a,
  b]
extra: z
`
	var d testDoc
	lines, err := Decode("t.yaml", []byte(doc), &d)
	if err != nil {
		t.Fatal(err)
	}
	want := Lines{
		"name": 1, "limits": 2, "limits.pids": 3, "routes": 4, "routes.local": 5, "routes.local.url": 6,
		"rules": 7, "rules[0]": 8, "rules[0].code": 8, "rules[0].reason": 9,
		"tags": 10, "tags[0]": 10, "tags[1]": 11, "extra": 12,
	}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
	for field, line := range map[string]int{
		"routes.local.auth": 5, "rules[0].subject": 8, "rules[3]": 7, "limits.memory": 2, "workspace": 0, "": 0,
	} {
		if got := lines.Line(field); got != line {
			t.Errorf("Line(%q) = %d, want %d", field, got, line)
		}
	}
	if got := Lines(nil).Line("a.b"); got != 0 {
		t.Errorf("nil Lines: %d", got)
	}
}

// TestDecodeGood: a document with every shape decodes as yaml decodes it,
// and the same document as JSON decodes the same.
func TestDecodeGood(t *testing.T) {
	doc := `name: a
count: -2
size: 7
enabled: true
ratio: 0.5
wait: 90s
level: high
tags: [x, "y"]
counts: [1, 2]
pair: [3, 4]
limits: {memory: 1GiB, pids: 9}
opt: {pids: 1}
routes:
  local: {url: "http://127.0.0.1:8080", auth: bearer}
rules:
  - {code: c, reason: r}
any: {whatever: [1, 2]}
plain: p
extra: e
`
	want := testDoc{
		Name: "a", Count: -2, Size: 7, Enabled: true, Ratio: 0.5, Wait: testDuration(90 * time.Second), Level: "high",
		Tags: []string{"x", "y"}, Counts: []int{1, 2}, Pair: [2]int{3, 4},
		Limits: testLimits{Memory: "1GiB", Pids: 9}, Opt: &testLimits{Pids: 1},
		Routes: map[string]testRoute{"local": {URL: "http://127.0.0.1:8080", Auth: "bearer"}},
		Rules:  []testRule{{Code: "c", Reason: "r"}},
		Any:    map[string]any{"whatever": []any{1, 2}}, Plain: "p", Inlined: Inlined{Extra: "e"},
	}
	var got testDoc
	if _, err := Decode("t.yaml", []byte(doc), &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("YAML (-want +got):\n%s", diff)
	}

	json := `{
  "name": "a", "count": -2, "size": 7, "enabled": true, "ratio": 0.5, "wait": "90s", "level": "high",
  "tags": ["x", "y"], "counts": [1, 2], "pair": [3, 4],
  "limits": {"memory": "1GiB", "pids": 9}, "opt": {"pids": 1},
  "routes": {"local": {"url": "http://127.0.0.1:8080", "auth": "bearer"}},
  "rules": [{"code": "c", "reason": "r"}],
  "any": {"whatever": [1, 2]}, "plain": "p", "extra": "e"
}`
	var fromJSON testDoc
	lines, err := Decode("t.json", []byte(json), &fromJSON)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, fromJSON); diff != "" {
		t.Errorf("JSON (-want +got):\n%s", diff)
	}
	if lines["routes.local.auth"] != 5 || lines["rules[0]"] != 6 {
		t.Errorf("JSON lines %v", lines)
	}
	_, err = Decode("t.json", []byte(`{"limits": {"pids": "many"}}`), &fromJSON)
	if err == nil || err.Error() != `t.json:1: limits.pids: expected a whole number, got "many"` {
		t.Errorf("JSON wrong type: %v", err)
	}
}

func TestDecodeNeedsAPointer(t *testing.T) {
	for _, out := range []any{testDoc{}, (*testDoc)(nil), nil} {
		if _, err := Decode("t.yaml", []byte("name: a\n"), out); err == nil {
			t.Errorf("Decode into %T succeeded", out)
		}
	}
}
