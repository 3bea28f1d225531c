//go:build cgo && linux

package seccomp

import (
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/agentbox/agentbox/seccomp/profiles"
)

// sameDecisions compiles p both ways and demands the same return value on
// every input, and that it is the one decide reads in the profile; it
// returns how many inputs it tried.
func sameDecisions(t *testing.T, name string, p *specs.LinuxSeccomp, argLimit int, r *rand.Rand) int {
	t.Helper()
	mine, err := Compile(p)
	if err != nil {
		t.Fatalf("%s: Compile: %v", name, err)
	}
	ref, err := CompileLibseccomp(p)
	if err != nil {
		t.Fatalf("%s: CompileLibseccomp: %v", name, err)
	}
	if diff := cmp.Diff(ref.Skipped, mine.Skipped); diff != "" {
		t.Errorf("%s: skipped names (-libseccomp +Compile):\n%s", name, diff)
	}
	in := inputs(p, argLimit, r)
	decide := decider(p)
	bad := 0
	for _, d := range in {
		want, err := evalBPF(ref.BPF, d)
		if err != nil {
			t.Fatalf("%s: libseccomp's program on %+v: %v", name, d, err)
		}
		got, err := evalBPF(mine.BPF, d)
		if err != nil {
			t.Fatalf("%s: Compile's program on %+v: %v", name, d, err)
		}
		if sem := decide(d); got != sem {
			t.Fatalf("%s: nr %d arch %#x args %#x: Compile's program returns %#x, the profile says %#x", name, d.nr, d.arch, d.args, got, sem)
		}
		if got != want {
			if bad++; bad <= 10 {
				t.Errorf("%s: nr %d (%#x) arch %#x args %#x: Compile's program returns %#x, libseccomp's %#x", name, d.nr, uint32(d.nr), d.arch, d.args, got, want)
			}
		}
	}
	if bad > 10 {
		t.Errorf("%s: %d inputs differ in all", name, bad)
	}
	return len(in)
}

// shippedProfiles are agentbox's profiles, in both forms, and the test
// profiles of this package narrowed to one covered architecture.
func shippedProfiles(t *testing.T) map[string]*specs.LinuxSeccomp {
	t.Helper()
	out := map[string]*specs.LinuxSeccomp{}
	for _, arch := range profiles.Arches() {
		out[string(arch)] = profiles.Default().OCI(arch)
		out[string(arch)+" logged"] = profiles.Default().LoggedOCI(arch, "/run/denials.sock")
	}
	files, err := filepath.Glob("testdata/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("testdata profiles: %v %v", files, err)
	}
	for _, f := range files {
		for _, arch := range profiles.Arches() {
			p, err := LoadFileFor(f, Target{Arch: arch})
			if err != nil {
				t.Fatal(err)
			}
			p.Architectures = []specs.Arch{arch}
			out[filepath.Base(f)+" "+string(arch)] = p
		}
	}
	return out
}

// TestCompileMatchesLibseccomp is the equivalence of the two compilers on
// the profiles agentbox ships: for every syscall number of both tables,
// x32 numbers, negative numbers, foreign architectures, and the boundary
// values of every argument the profile compares, both programs return the
// same action. Compile is what agentbox loads; libseccomp is what runc
// builds from the same profile.
func TestCompileMatchesLibseccomp(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for name, p := range shippedProfiles(t) {
		t.Run(name, func(t *testing.T) {
			n := sameDecisions(t, name, p, 200000, r)
			t.Logf("%d inputs", n)
		})
	}
}

func init() { libseccompOracle = CompileLibseccomp }
