package compose

import (
	"debug/elf"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/agentbox/agentbox/compose/internal/composetest"
	"github.com/agentbox/agentbox/policy"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

const testToken = composetest.Token

func fakeELF(m elf.Machine, dynamic bool) []byte { return composetest.ELF(m, dynamic) }

func testPlan(ws string) *policy.Plan { return composetest.Plan(ws) }

// testOptions renders into ws/agentbox-compose with fixed inputs.
func testOptions(ws string, command ...string) Options {
	return Options{
		Command:       command,
		Image:         "example.org/agents/codex:1",
		OutDir:        filepath.Join(ws, "agentbox-compose"),
		Token:         testToken,
		GatewayBinary: fakeELF(elf.EM_X86_64, false),
		CABundle:      composetest.CABundle,
		Arch:          specs.ArchX86_64,
	}
}

// golden compares got with testdata/golden/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./compose -update to create it)", err)
	}
	if d := cmp.Diff(string(want), string(got)); d != "" {
		t.Errorf("%s differs from the golden file (-want +got; run with -update if the change is intended):\n%s", name, d)
	}
}
