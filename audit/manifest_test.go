package audit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	. "github.com/agentbox/agentbox/audit"
	"github.com/agentbox/agentbox/audit/manifest"
	"github.com/agentbox/agentbox/policy"
)

// The tests of package audit that read a compose file: they load it with
// audit/manifest, which package audit's own tests cannot import.

func TestSARIFValidatesAgainstSchema(t *testing.T) {
	sch := SarifSchemaValidator(t)
	dir := t.TempDir()
	compose := filepath.Join(dir, "compose.yaml")
	body := "services:\n  agent:\n    image: x\n    privileged: true\n    volumes:\n      - /var/run/docker.sock:/var/run/docker.sock\n"
	if err := os.WriteFile(compose, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	cs, err := manifest.LoadCompose(t.Context(), []string{compose}, manifest.ComposeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cs = append(cs, ParseFixture(t, "weak.json")...)
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
	var log SarifLog
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

// TestComposeLabels: a compose service's labels reach the model, and the
// label's bind wins over the project directory.
func TestComposeLabels(t *testing.T) {
	dir := t.TempDir()
	cache := t.TempDir()
	body := `services:
  agent:
    image: x
    user: "1000:1000"
    labels:
      ` + policy.WorkspaceLabel + `: ` + cache + `
      ` + policy.AcceptLabel(CodeNoUserNS) + `: no user namespace here
    volumes:
      - .:/workspace
      - ` + cache + `:/cache
`
	f := filepath.Join(dir, "compose.yaml")
	if err := os.WriteFile(f, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	cs, err := manifest.LoadCompose(context.Background(), []string{f}, manifest.ComposeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := Audit(cs, Options{})
	cr := r.Containers[0]
	if cr.Model.LabeledWorkspace != cache {
		t.Errorf("labelled workspace %q, want %s", cr.Model.LabeledWorkspace, cache)
	}
	var mounts []string
	for _, f := range cr.Findings {
		if f.Code == CodeExtraWritable {
			mounts = append(mounts, f.Subject)
		}
	}
	if len(mounts) != 1 || !strings.HasPrefix(mounts[0], dir+" -> ") {
		t.Errorf("extra-writable findings %v, want the project directory's bind", mounts)
	}
	if diff := cmp.Diff([]policy.Acceptance{{Code: CodeNoUserNS, Reason: "no user namespace here"}}, cr.Model.LabelAccepts); diff != "" {
		t.Errorf("label acceptances (-want +got):\n%s", diff)
	}
}
