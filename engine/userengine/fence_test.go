package userengine

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite testdata/")

func TestRuleset(t *testing.T) {
	f := Fence{Table: TableName("20261201T124004.000Z-0a1b2c3d"), UID: 990, Port: 41234}
	golden := filepath.Join("testdata", "fence.nft")
	if *update {
		if err := os.WriteFile(golden, []byte(f.Ruleset()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(string(want), f.Ruleset()); d != "" {
		t.Errorf("ruleset (-golden +got):\n%s", d)
	}
}

func TestTableName(t *testing.T) {
	for in, want := range map[string]string{
		"20261201T124004.000Z-0a1b2c3d": "agentbox-20261201T124004_000Z-0a1b2c3d",
		"a b;c":                         "agentbox-a_b_c",
	} {
		if got := TableName(in); got != want {
			t.Errorf("TableName(%q) = %q, want %q", in, got, want)
		}
	}
}
