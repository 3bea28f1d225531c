package spec

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/agentbox/agentbox/internal/policytest"
	"github.com/agentbox/agentbox/policy"
	"github.com/agentbox/agentbox/seccomp/profiles"
	specs "github.com/opencontainers/runtime-spec/specs-go"
)

var update = flag.Bool("update", false, "rewrite golden files")

// defaultPlan is what policy.Resolve makes of the zero policy and `sh` for
// a root launcher in a root-owned workspace on a merged-/usr host
// (policytest.Host): agentbox-init is the first process, as uid 0 of the
// user namespace with InitCaps. It is Resolve's own output, so the golden
// follows the planner instead of a copy of it.
func defaultPlan(t *testing.T) *policy.Plan {
	t.Helper()
	plan, err := policy.Resolve(policy.Policy{}, []string{"sh"}, policytest.Host(policytest.NewFS()), policy.Run{ID: policy.RunIDPlaceholder, Bundle: "/run/agentbox/runs/RUN_ID/bundle"})
	if err != nil {
		t.Fatal(err)
	}
	return plan
}

func renderDefault(t *testing.T) []byte {
	t.Helper()
	plan := defaultPlan(t)
	p, ok := profiles.Named(plan.Seccomp)
	if !ok {
		t.Fatalf("the plan names seccomp profile %q, which does not exist", plan.Seccomp)
	}
	uids, gids := policytest.SlotMappings(plan.Identity)
	s, err := FromPlan(plan, Extras{Seccomp: p.OCI(specs.ArchX86_64), UIDMappings: uids, GIDMappings: gids})
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.MarshalIndent(s, "", "\t")
	if err != nil {
		t.Fatal(err)
	}
	return append(data, '\n')
}

func TestGoldenDefaultConfig(t *testing.T) {
	got := renderDefault(t)
	golden := filepath.Join("testdata", "default-config.json")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./spec -update to create it)", err)
	}
	if d := cmp.Diff(string(want), string(got)); d != "" {
		t.Errorf("config.json differs from %s (-golden +rendered); review the change and run go test ./spec -update:\n%s", golden, d)
	}
}

// The generated config validates against the runtime-spec's own schema.
func TestConfigMatchesRuntimeSpecSchema(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join("testdata", "runtime-spec-schema"))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft4) // the runtime-spec schemas are draft-04; not all of them say so
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	for _, f := range files {
		r, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(r)
		r.Close()
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if err := c.AddResource("file://"+f, doc); err != nil {
			t.Fatal(err)
		}
	}
	sch, err := c.Compile("file://" + filepath.Join(dir, "config-schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(renderDefault(t)))
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(inst); err != nil {
		t.Errorf("generated config.json is not valid per the runtime-spec schema:\n%v", err)
	}
	// The schema must be able to fail: a config without ociVersion is invalid.
	var broken map[string]any
	_ = json.Unmarshal(renderDefault(t), &broken)
	delete(broken, "ociVersion")
	if err := sch.Validate(broken); err == nil {
		t.Error("schema accepted a config without ociVersion; the validation proves nothing")
	}
}
