package audit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
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
