package compose

import (
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/types"
	"go.yaml.in/yaml/v3"
)

func TestQuoteAmbiguous(t *testing.T) {
	for v, quoted := range map[string]bool{
		"1000:50": true, "1000:1000": false, "65532:65532": false, "0:0": true, "yes": true, "On": true,
		"off": true, "y": true, "~": true, "": true, "0755": true, "1e3": false, "1.5": true, "12": true,
		"0x1f": true, ".inf": true, "hello": false, "/tmp:mode=1777": false, "no-new-privileges:true": false,
		"agentbox-gw-abc": false,
	} {
		n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v}
		quoteAmbiguous(n)
		if got := n.Style == yaml.DoubleQuotedStyle; got != quoted {
			t.Errorf("%q: quoted=%v, want %v", v, got, quoted)
		}
	}
}

// TestMarshalCompat: a uid:gid that YAML 1.1 reads as base 60 is quoted, and
// depends_on's default required: true is left out; the result still loads
// into the same model.
func TestMarshalCompat(t *testing.T) {
	p := &types.Project{Services: types.Services{
		"a": {
			Name: "a", ContainerSpec: types.ContainerSpec{Image: "x", User: "1000:50"},
			WorkloadSpec: types.WorkloadSpec{DependsOn: types.DependsOnConfig{"b": {Condition: types.ServiceConditionStarted, Required: true}}},
		},
		"b": {Name: "b", ContainerSpec: types.ContainerSpec{Image: "x"}},
	}}
	b, err := Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	if !strings.Contains(s, `user: "1000:50"`) || strings.Contains(s, "required") || !strings.HasPrefix(s, "# Written by agentbox compose") {
		t.Errorf("compat output:\n%s", s)
	}
	var back struct {
		Services map[string]struct {
			User string `yaml:"user"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal(b, &back); err != nil || back.Services["a"].User != "1000:50" {
		t.Errorf("read back: %+v, %v", back, err)
	}
}
