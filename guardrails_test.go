// Guard-rail tests over the whole module (STYLE.md §16): every package says
// what it is, the pipeline's import direction holds, and the CLI's help is
// consistent with its commands.
package agentbox_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/netpolicy"
	"github.com/agentbox/agentbox/policy"
)

const module = "github.com/agentbox/agentbox/"

// packages returns every package directory of the module with its parsed
// non-test files.
func packages(t *testing.T) map[string][]*ast.File {
	t.Helper()
	out := map[string][]*ast.File{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "bin") && path != "." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.ImportsOnly)
		if err != nil {
			return err
		}
		out[filepath.Dir(path)] = append(out[filepath.Dir(path)], f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestEveryPackageHasOneDocComment(t *testing.T) {
	for dir, files := range packages(t) {
		docs := 0
		for _, f := range files {
			if f.Doc != nil && strings.TrimSpace(f.Doc.Text()) != "" {
				docs++
			}
		}
		if docs != 1 {
			t.Errorf("%s: %d files carry a package comment, want exactly 1", dir, docs)
		}
	}
}

// layers is the one declaration of the pipeline's shape (DESIGN.md §3,
// §4): for every package of the module, the module packages it may import
// and whether it may run programs (os/exec). It is an allowlist: a new
// package, or a new edge between two, is a decision made here, in one
// place, where a reviewer sees it. The linter has no second copy.
var layers = map[string]layer{
	// The leaves depend on nothing of the pipeline.
	"agents":                        {},
	"ledger":                        {},
	"selftest":                      {may: []string{"policy/homesecrets"}},
	"policy/homesecrets":            {}, // the one list of a home's credential entries
	"termfilter":                    {},
	"workspace":                     {},           // only ever read: never a git, never a plan
	"internal/nsexec":               {exec: true}, // fds-exec runs a containerd shim's runtime create as its child
	"internal/yamlfile":             {},
	"netpolicy/bridge":              {},
	"netpolicy/fakemodel":           {may: []string{"netpolicy/scripted"}},
	"netpolicy/scripted":            {}, // the escape self-test's model: it serves, runs nothing
	"seccomp/profiles":              {},
	"seccomp/profiles/internal/gen": {may: []string{"seccomp/profiles"}},
	"seccomp/internal/syscallgen":   {}, // go generate: the syscall table, from libseccomp
	"seccomp":                       {may: []string{"seccomp/profiles"}},
	"apparmor":                      {exec: true},                          // apparmor_parser loads profiles
	"userns":                        {may: []string{"ledger"}, exec: true}, // newuidmap
	"netpolicy":                     {may: []string{"internal/yamlfile", "netpolicy/bridge"}},
	// The seccomp listener and the Landlock audit reader of a run's
	// denial log: they write ledger denials and run nothing.
	"denials": {may: []string{"ledger"}},
	// The runtime CVE table and its pure judgement: doctor and the
	// launcher ask it, each reading the runtime itself.
	"engine/advisory": {},
	"account":         {may: []string{"policy/homesecrets"}, exec: true}, // useradd/dscl for setup-user
	// Planning is pure and sits at the top of the pipeline: the host
	// arrives as policy.Host, nothing is run.
	"policy": {may: []string{"agents", "internal/yamlfile", "policy/homesecrets", "seccomp/profiles", "workspace"}},
	// Host facts are captured once, for planning and for doctor.
	"host": {may: []string{"apparmor", "policy"}, exec: true},
	// Renderers translate a plan; they never run anything.
	"spec":    {may: []string{"policy"}},
	"compose": {may: []string{"agents", "apparmor", "netpolicy", "policy", "seccomp/profiles"}},
	"kube":    {may: []string{"agents", "apparmor", "netpolicy", "policy", "seccomp/profiles"}},
	// The audit reads rendered specs and running containers' configs.
	"audit": {may: []string{"account", "agents", "apparmor", "policy", "seccomp", "seccomp/profiles", "spec"}},
	// Compose files and Kubernetes manifests into audit models: apart from
	// audit, so that the launch binary links neither compose-go nor k8s.io.
	"audit/manifest": {may: []string{"audit", "policy", "seccomp"}},
	"compose/check":  {may: []string{"audit", "audit/manifest", "compose", "netpolicy", "policy"}},
	// Engines run what the renderers wrote.
	"engine": {may: []string{"internal/nsexec", "ledger", "policy", "termfilter"}, exec: true},
	// The containerd engine drives a daemon through its client: it runs
	// nothing itself (the shim runs the runtime).
	"engine/containerd": {may: []string{"engine", "engine/containerd/ctrversion", "internal/nsexec", "ledger", "policy"}},
	// The daemon's version gate, which doctor applies without the client.
	"engine/containerd/ctrversion": {},
	// The dedicated-user engine starts init on the host and loads the
	// account's fence with nft.
	"engine/userengine": {may: []string{"account", "engine", "ledger", "policy"}, exec: true},
	"doctor":            {may: []string{"account", "apparmor", "audit", "engine", "engine/advisory", "engine/containerd/ctrversion", "host", "ledger", "policy", "userns"}, exec: true},
	// The launcher drives every stage below it; only the CLI (and the
	// launcher's own test-only command) sits above it.
	"launcher": {may: []string{
		"agents", "apparmor", "audit", "denials", "doctor", "engine", "engine/advisory",
		"engine/containerd/ctrversion", "engine/userengine", "account", "seccomp",
		"host", "ledger", "netpolicy", "netpolicy/bridge", "netpolicy/scripted", "policy", "seccomp/profiles", "selftest", "spec", "userns", "workspace",
	}, exec: true},
	// agentbox compose and kube: the plan rendered for another
	// orchestrator, audited before it is written (agentbox-ext only).
	"launcher/deploy": {may: []string{
		"audit", "audit/manifest", "compose", "compose/check", "host", "kube", "launcher", "ledger", "netpolicy", "policy",
	}, exec: true},
	// The test-only launcher links the containerd engine as
	// agentbox-containerd does.
	"launcher/internal/launchertest": {may: []string{"engine/containerd", "launcher", "policy"}},
	"cmd/agentbox": {may: []string{
		"account", "audit", "audit/manifest", "compose", "compose/check", "doctor", "engine/containerd", "host", "launcher",
		"launcher/deploy", "ledger", "netpolicy", "policy",
	}, exec: true},
	"cmd/agentbox-init": {may: []string{"internal/nsexec", "netpolicy/bridge", "selftest"}},
	// Benchmarks and test helpers.
	"bench/abbench":                {may: []string{"engine", "policy", "selftest"}, exec: true},
	"internal/testutil":            {may: []string{"seccomp/profiles"}, exec: true},
	"internal/policytest":          {may: []string{"policy"}},
	"compose/internal/composetest": {may: []string{"policy"}},
	// A module of its own that builds the kube test tier's kube-apiserver
	// and etcd (scripts/kube-up.sh); it imports nothing of agentbox.
	"tools/kube":           {},
	"tools/kube/etcd":      {},
	"tools/kube/schemagen": {},
	// A module of its own that builds gVisor's runsc for the gVisor
	// integration test (scripts/runsc-build.sh); it imports nothing of agentbox.
	"tools/runsc": {},
	// Modules of their own that build containerd 1.7 and 2.x daemons for
	// the containerd engine's version tests (scripts/containerd-build.sh);
	// they import nothing of agentbox.
	"tools/containerd/1.7": {},
	"tools/containerd/2.x": {},
}

// layer is one package's place in the pipeline.
type layer struct {
	may  []string // module packages it may import, relative to the module
	exec bool     // may import os/exec
}

func TestPipelineImportDirection(t *testing.T) {
	pkgs := packages(t)
	for dir := range layers {
		if _, ok := pkgs[dir]; !ok {
			t.Errorf("layers declares %s, which has no Go files: drop it", dir)
		}
	}
	for dir, files := range pkgs {
		dir = filepath.ToSlash(dir)
		l, ok := layers[dir]
		if !ok {
			t.Errorf("package %s is not in layers: declare what it may import", dir)
			continue
		}
		for _, f := range files {
			for _, imp := range f.Imports {
				path := strings.Trim(imp.Path.Value, `"`)
				switch {
				case path == "os/exec" && !l.exec:
					t.Errorf("%s imports os/exec; its layer runs nothing", dir)
				case strings.HasPrefix(path, module) && !contains(l.may, strings.TrimPrefix(path, module)):
					t.Errorf("%s imports %s, which its layer does not allow", dir, path)
				}
			}
		}
	}
}

// The shipped binary has no test hook: cmd/agentbox never sets the
// launcher's test-only Config fields, does not link the test-only
// launcher, and no shipped source stops its own process or reads a test
// variable other than the skip rules' AGENTBOX_TEST_STRICT.
func TestShippedBinaryHasNoTestHooks(t *testing.T) {
	hooks := []string{"AfterStep", "Weaken", "WeakenInit"}
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		dir := filepath.ToSlash(filepath.Dir(path))
		if dir == "launcher/internal/launchertest" || strings.HasPrefix(dir, ".") && dir != "." || strings.HasPrefix(dir, "bin") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, bad := range []string{"SIGSTOP", "AGENTBOX_TEST_PAUSE"} {
			if strings.Contains(string(data), bad) {
				t.Errorf("%s mentions %s: the shipped code stops for no test", path, bad)
			}
		}
		if dir != "cmd/agentbox" {
			return nil
		}
		f, err := parser.ParseFile(fset, path, data, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok && contains(hooks, id.Name) {
				t.Errorf("%s uses the launcher's test-only %s", fset.Position(id.Pos()), id.Name)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "list", "-deps", "./cmd/agentbox").Output()
	if err != nil {
		t.Fatalf("go list -deps ./cmd/agentbox: %v", err)
	}
	if strings.Contains(string(out), module+"launcher/internal/launchertest") {
		t.Error("the agentbox binary links the test-only launcher")
	}
}

// The launch binary (cmd/agentbox built without a helper's tag) links
// nothing that only audit, compose, kube or the containerd engine need: Go
// runs the initialiser of every package a binary links, on every `agentbox
// run` (issue 14; README, "Three binaries"). Each helper links its own
// share and not the other's: agentbox-ext (agentbox_ext) compose-go and
// k8s.io, agentbox-containerd (agentbox_containerd) the containerd client,
// so that a launch on containerd pays no initialiser of compose's; the
// check must see each.
func TestLaunchBinaryLinksNoHelperPackages(t *testing.T) {
	manifests := []string{"github.com/compose-spec/compose-go/", "k8s.io/", "sigs.k8s.io/", "github.com/santhosh-tekuri/jsonschema/"}
	ctrd := []string{"github.com/containerd/containerd/", "google.golang.org/grpc", "github.com/klauspost/compress/"}
	manifestPkgs := []string{"audit/manifest", "compose", "compose/check", "kube", "launcher/deploy"}
	heavy := func(tags string, prefixes, exact []string) []string {
		t.Helper()
		out, err := exec.Command("go", "list", "-deps", "-tags", tags, "./cmd/agentbox").Output()
		if err != nil {
			t.Fatalf("go list -deps -tags %q ./cmd/agentbox: %v", tags, err)
		}
		var found []string
		for _, p := range strings.Fields(string(out)) {
			for _, pre := range prefixes {
				if strings.HasPrefix(p, pre) {
					found = append(found, p)
				}
			}
			if strings.HasPrefix(p, module) && contains(exact, strings.TrimPrefix(p, module)) {
				found = append(found, p)
			}
		}
		return found
	}
	if got := heavy("", append(manifests, ctrd...), append(manifestPkgs, "engine/containerd")); len(got) > 0 {
		t.Errorf("the launch binary links %d package(s) only a helper needs: %v", len(got), got)
	}
	if got := heavy("agentbox_containerd", manifests, manifestPkgs); len(got) > 0 {
		t.Errorf("agentbox-containerd links %d package(s) only agentbox-ext needs: %v", len(got), got)
	}
	if got := heavy("agentbox_ext", ctrd, []string{"engine/containerd"}); len(got) > 0 {
		t.Errorf("agentbox-ext links %d package(s) only agentbox-containerd needs: %v", len(got), got)
	}
	for tags, wants := range map[string][]string{
		"agentbox_ext":        {"compose-go", "k8s.io/api", "jsonschema", module + "launcher/deploy"},
		"agentbox_containerd": {"containerd/containerd", "google.golang.org/grpc", module + "engine/containerd"},
	} {
		got := strings.Join(heavy(tags, append(manifests, ctrd...), append(manifestPkgs, "engine/containerd")), " ")
		for _, want := range wants {
			if !strings.Contains(got, want) {
				t.Errorf("the build with %s does not link %s: the checks above would not see it either", tags, want)
			}
		}
	}
}

// Constants that two packages must agree on, without one importing the
// other against the pipeline's direction.
func TestSharedConstantsAgree(t *testing.T) {
	if policy.GatewaySocket != netpolicy.SandboxSocket {
		t.Errorf("policy binds the gateway at %s, the gateway expects %s", policy.GatewaySocket, netpolicy.SandboxSocket)
	}
}

// The help lists every command once, and each command's --help answers
// with its own usage line and exit 0.
func TestCLIHelpIsConsistent(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "agentbox")
	for _, b := range [][]string{{"-o", bin}, {"-tags", "agentbox_ext", "-o", filepath.Join(dir, "agentbox-ext")}} {
		build := exec.Command("go", append(append([]string{"build"}, b...), "./cmd/agentbox")...)
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("build: %v\n%s", err, out)
		}
	}
	out, err := exec.Command(bin, "help").Output()
	if err != nil {
		t.Fatalf("agentbox help: %v", err)
	}
	var names []string
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); strings.HasPrefix(line, "  ") && len(f) > 1 {
			names = append(names, f[0])
		}
	}
	for _, want := range []string{"run", "spec", "selftest", "audit", "doctor", "runs", "show", "gc"} {
		if !contains(names, want) {
			t.Errorf("help does not list %s (lists %v)", want, names)
		}
	}
	for _, name := range names {
		cmd := exec.Command(bin, name, "--help")
		msg, err := cmd.CombinedOutput()
		if err != nil || !strings.HasPrefix(string(msg), "usage: agentbox "+name) {
			t.Errorf("agentbox %s --help: %v\n%s", name, err, msg)
		}
	}
	if err := exec.Command(bin, "no-such-command").Run(); err == nil {
		t.Error("an unknown command exited 0")
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Every docs/*.md path named in Go source exists (a dead link in a flag's
// help text is the first thing a user follows).
func TestDocLinksInSourceExist(t *testing.T) {
	re := regexp.MustCompile(`docs/[A-Za-z0-9_./-]+\.md`)
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() && (d.Name() == ".git" || d.Name() == "bin") {
			if err == nil {
				return filepath.SkipDir
			}
			return err
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, link := range re.FindAllString(string(data), -1) {
			if _, err := os.Stat(link); err != nil {
				t.Errorf("%s names %s, which does not exist", path, link)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// cliLineBudget is the most lines cmd/agentbox's non-test files may have:
// the CLI maps flags to the packages' inputs and errors to exit codes;
// anything that decides or runs belongs below it (issue 11).
const cliLineBudget = 1200

func TestCLIStaysThin(t *testing.T) {
	files, err := filepath.Glob("cmd/agentbox/*.go")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		n += strings.Count(string(data), "\n")
	}
	if n > cliLineBudget {
		t.Errorf("cmd/agentbox has %d non-test lines, over its budget of %d: move what decides or runs into the packages below it", n, cliLineBudget)
	}
}
