package audit

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/agentbox/agentbox/policy"
)

// sarifSchemaValidator compiles the vendored OASIS SARIF 2.1.0 schema; the
// test never downloads anything.
func sarifSchemaValidator(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "sarif-schema-2.1.0.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(sarifSchema, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(sarifSchema)
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

func TestSARIFValidatesAgainstSchema(t *testing.T) {
	sch := sarifSchemaValidator(t)
	dir := t.TempDir()
	compose := filepath.Join(dir, "compose.yaml")
	body := "services:\n  agent:\n    image: x\n    privileged: true\n    volumes:\n      - /var/run/docker.sock:/var/run/docker.sock\n"
	if err := os.WriteFile(compose, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	cs, err := LoadCompose(t.Context(), []string{compose}, ComposeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cs = append(cs, parseFixture(t, "weak.json")...)
	cs = append(cs, FromSpec(nil, "empty"))
	r := Audit(cs, Options{Accept: []policy.Acceptance{{Code: CodeNoLimits, Reason: "short-lived test"}}})
	var buf bytes.Buffer
	if err := WriteSARIF(&buf, r, "0.0.0-test"); err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(inst); err != nil {
		t.Fatalf("SARIF output does not validate: %v", err)
	}
	var log sarifLog
	if err := json.Unmarshal(buf.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	var sawLine, sawSuppressed bool
	for _, res := range log.Runs[0].Results {
		for _, l := range res.Locations {
			if p := l.PhysicalLocation; p != nil && p.Region != nil && strings.HasSuffix(p.ArtifactLocation.URI, "/compose.yaml") {
				sawLine = sawLine || res.RuleID == CodeContainerSocket && p.Region.StartLine == 6
			}
		}
		sawSuppressed = sawSuppressed || len(res.Suppressions) > 0 && res.RuleID == CodeNoLimits
	}
	if !sawLine {
		t.Error("the compose socket finding lacks file and line 6")
	}
	if !sawSuppressed {
		t.Error("the accepted finding is not suppressed")
	}
}

func TestSARIFSchemaRejectsBrokenLogs(t *testing.T) {
	sch := sarifSchemaValidator(t)
	for _, bad := range []string{`{"version":"2.1.0"}`, `{"version":"9","runs":[]}`, `{"version":"2.1.0","runs":[{"results":[]}]}`} {
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(bad))
		if err != nil {
			t.Fatal(err)
		}
		if sch.Validate(inst) == nil {
			t.Errorf("schema accepted %s", bad)
		}
	}
}
