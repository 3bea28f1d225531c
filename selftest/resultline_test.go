package selftest

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// resultSeeds are results as probes make them, and strings that the fast
// paths must hand to encoding/json: escapes, HTML characters, non-ASCII,
// control bytes, an empty detail.
var resultSeeds = []Result{
	{Probe: "host-home-not-mounted", Target: "/root", Expect: Deny, Decision: Deny, Observed: "not-mounted", RunID: "20261201T222131.000Z-b898f500", Evidence: "sha256:0386088200959c1861c9601c3c7ffe62decb2f601970e9e816879a41df6cfea6", Detail: "no mount shows /root (0:45 /root)"},
	{Probe: "gateway-reachable", Target: "127.0.0.1:8787/_agentbox/health", Expect: Allow, Decision: Allow, Observed: "health-ok"},
	{Probe: "p", Detail: `a "quoted" \ back`},
	{Probe: "p", Detail: "<html> & co"},
	{Probe: "p", Detail: "caf\u00e9 \u2028 line"},
	{Probe: "p", Detail: "tab\tnew\nline\x01"},
	{Probe: "p", Detail: "bad utf8 \xff\xfe"},
	{},
}

// TestResultLineMatchesEncodingJSON: a line the scan accepts decodes to
// what json.Unmarshal makes of it, and a result message the append writes
// is what json.Marshal writes; the lines json.Encoder writes for plain
// results are ones the scan accepts.
func TestResultLineMatchesEncodingJSON(t *testing.T) {
	accepted := 0
	for _, r := range resultSeeds {
		var buf bytes.Buffer
		if err := json.NewEncoder(&buf).Encode(r); err != nil {
			t.Fatal(err)
		}
		line := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
		checkResultLine(t, line)
		if _, ok := scanResult(line); ok {
			accepted++
		}
		checkResultMessage(t, r)
	}
	if accepted < 3 {
		t.Errorf("the scan took %d of the encoder's lines, want the plain ones (at least 3)", accepted)
	}
	for _, line := range []string{
		`{}`, `{"probe":"a"}`, `{"probe":"a","probe":"b"}`, `{"Probe":"a"}`, `{"probe":"a","x":"y"}`,
		`{"probe":"a",}`, `{"probe":null}`, `{"probe":1}`, `{"probe":"a"} `, ` {"probe":"a"}`, `{"probe" :"a"}`,
		`{"probe":"a"}{"probe":"b"}`, `{"probe":"a\u0041"}`, `{"detail":""}`, `{`, `}`, `{"probe":"a"`, `[]`,
	} {
		checkResultLine(t, []byte(line))
	}
	if _, ok := appendResultMessage(nil, Message{Type: MsgResult, Result: &Result{}, PID: 3}); ok {
		t.Error("the append wrote a result message that carries a pid too")
	}
}

// FuzzResultLine holds the scan to encoding/json on any line.
func FuzzResultLine(f *testing.F) {
	for _, r := range resultSeeds {
		b, _ := json.Marshal(r)
		f.Add(b)
	}
	f.Add([]byte(`{"probe":"a","probe":"b"}`))
	f.Fuzz(func(t *testing.T, line []byte) { checkResultLine(t, line) })
}

// FuzzResultMessage holds the append to encoding/json on any result.
func FuzzResultMessage(f *testing.F) {
	for _, r := range resultSeeds {
		f.Add(r.Probe, r.Target, string(r.Decision), r.Observed, r.Detail)
	}
	f.Fuzz(func(t *testing.T, probe, target, decision, observed, detail string) {
		checkResultMessage(t, Result{Probe: probe, Target: target, Expect: Deny, Decision: Decision(decision), Observed: observed, RunID: "R", Evidence: "E", Detail: detail})
	})
}

func checkResultLine(t *testing.T, line []byte) {
	t.Helper()
	got, ok := scanResult(line)
	if !ok {
		return
	}
	var want Result
	if err := json.Unmarshal(line, &want); err != nil {
		t.Fatalf("the scan took %q, which json.Unmarshal refuses: %v", line, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: the scan gives %+v, json.Unmarshal %+v", line, got, want)
	}
}

func checkResultMessage(t *testing.T, r Result) {
	t.Helper()
	m := Message{Type: MsgResult, Result: &r}
	want, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	got, err := marshalMessage(m)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("%+v: marshalMessage gives %s (%v), json.Marshal %s", r, got, err, want)
	}
	var enc bytes.Buffer
	if err := json.NewEncoder(&enc).Encode(r); err != nil {
		t.Fatal(err)
	}
	line, err := AppendResult([]byte("x"), r)
	if err != nil || string(line) != "x"+strings.TrimSuffix(enc.String(), "\n") {
		t.Fatalf("%+v: AppendResult gives %s (%v), json.Encoder %s", r, line, err, enc.String())
	}
}

// The fast paths know Result's fields by name and order, and that only
// detail is omitempty: a field added to Result, renamed or made optional
// must be added there too, and this says so before any line differs.
func TestResultFieldsAreResultsJSONFields(t *testing.T) {
	rt := reflect.TypeFor[Result]()
	var names []string
	for i := range rt.NumField() {
		f := rt.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if f.Type.Kind() != reflect.String || name == "" || name == "-" {
			t.Fatalf("Result.%s (json %q, %s): the fast paths handle only named string fields", f.Name, tag, f.Type)
		}
		if omit := strings.Contains(opts, "omitempty"); omit != (name == "detail") {
			t.Errorf("Result.%s: omitempty %v; the fast paths omit only an empty detail", f.Name, omit)
		}
		names = append(names, name)
	}
	if strings.Join(names, ",") != strings.Join(resultFields[:], ",") {
		t.Errorf("Result's JSON fields %v, resultFields %v", names, resultFields)
	}
}
