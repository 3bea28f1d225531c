//go:build integration

package audit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/internal/testutil"
)

// These tests run real Podman containers: rootful as root, in the main
// integration run, and rootless as the test user, in scripts/test-rootless.sh
// (the tests named *Rootless). scripts/podman-setup.sh makes Podman work on
// this host and imports the image the Docker tests run; nothing is pulled.
// Each test starts its own Podman API service on a socket of its own (under
// /run for root, under XDG_RUNTIME_DIR for the user) and reads the
// containers through it, as `agentbox audit --engine podman --host` does,
// and through `podman inspect` output saved to a file, the other route.
// Containers get no traffic: they only sleep while the audit reads them.

type podmanEnv struct {
	t        *testing.T
	prefix   string
	rootless bool
	// cgroupV1 is true when Podman runs on cgroup v1: rootless, it then
	// ignores resource limits ("Resource limits are not supported and
	// ignored on cgroups V1 rootless systems").
	cgroupV1 bool
	// sock is the test's own API service socket; engine reads through it.
	sock   string
	engine *Engine
}

// requirePodman checks that Podman runs here as root (rootless false) or as
// an ordinary user (rootless true), and starts the test's API service.
func requirePodman(t *testing.T, rootless bool) *podmanEnv {
	t.Helper()
	if rootless {
		testutil.RequireNonRoot(t)
	} else {
		testutil.RequireRoot(t)
	}
	testutil.RequirePodman(t)
	p := &podmanEnv{t: t, rootless: rootless, prefix: "abx-podman-" + randomHex(t)}
	p.readInfo()
	p.sock = testutil.PodmanService(t)
	e, err := NewEngine("podman", p.sock)
	if err != nil {
		t.Fatal(err)
	}
	p.engine = e
	return p
}

func randomHex(t *testing.T) string {
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// readInfo asks podman what it is and checks that it is what the test
// wants.
func (p *podmanEnv) readInfo() {
	out, err := exec.Command("podman", "info", "--format", "json").Output()
	if err != nil {
		testutil.Skip(p.t, fmt.Sprintf("podman info: %v (run scripts/test-setup.sh as root)\n%s", err, stderrOf(err)))
	}
	var info struct {
		Host struct {
			CgroupVersion string
			Security      struct{ Rootless bool }
		}
	}
	if err := json.Unmarshal(out, &info); err != nil {
		p.t.Fatalf("podman info: %v", err)
	}
	if info.Host.Security.Rootless != p.rootless {
		p.t.Fatalf("podman info says rootless=%t, the test wants %t", info.Host.Security.Rootless, p.rootless)
	}
	p.cgroupV1 = info.Host.CgroupVersion == "v1"
}

func stderrOf(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(ee.Stderr)
	}
	return ""
}

func (p *podmanEnv) podman(args ...string) string {
	p.t.Helper()
	out, err := exec.Command("podman", args...).CombinedOutput()
	if err != nil {
		hint := ""
		if strings.Contains(string(out), "setrlimit") || strings.Contains(string(out), "hybrid mode") {
			hint = " (this host's Podman configuration is missing: run scripts/podman-setup.sh as root; docs/podman.md says why)"
		}
		p.t.Fatalf("podman %s: %v%s\n%s", strings.Join(args, " "), err, hint, out)
	}
	return strings.TrimSpace(string(out))
}

// network creates a network, internal or not, removed at cleanup.
func (p *podmanEnv) network(name string, internal bool) string {
	p.t.Helper()
	name = p.prefix + "-" + name
	args := []string{"network", "create"}
	if internal {
		args = append(args, "--internal")
	}
	p.podman(append(args, name)...)
	p.t.Cleanup(func() { exec.Command("podman", "network", "rm", "-f", name).Run() })
	return name
}

// container creates and starts a container, removed at cleanup. As for
// Docker, runc cannot start a container that asks for every capability on
// this VM (its bounding set lacks CAP_SYS_RESOURCE): such a container stays
// created, and the audit reads its configuration all the same.
func (p *podmanEnv) container(name string, args ...string) string {
	p.t.Helper()
	name = p.prefix + "-" + name
	p.t.Cleanup(func() { exec.Command("podman", "rm", "-f", "-t", "0", name).Run() })
	p.podman(append([]string{"create", "--name", name}, args...)...)
	if out, err := exec.Command("podman", "start", name).CombinedOutput(); err != nil {
		if !strings.Contains(string(out), "unable to apply caps") {
			p.t.Fatalf("podman start %s: %v\n%s", name, err, out)
		}
		p.t.Logf("%s stays created: this host cannot grant every capability (%s)", name, strings.TrimSpace(string(out)))
	}
	return name
}

// audit reads the container through the test's API service.
func (p *podmanEnv) audit(name string, opts Options) ContainerReport {
	p.t.Helper()
	c, err := p.engine.Container(context.Background(), name)
	if err != nil {
		p.t.Fatal(err)
	}
	return Audit([]Container{c}, opts).Containers[0]
}

// auditInspect reads the container from `podman inspect` output saved to a
// file, the way `agentbox audit inspect.json` does.
func (p *podmanEnv) auditInspect(name string, opts Options) ContainerReport {
	p.t.Helper()
	f := filepath.Join(p.t.TempDir(), "inspect.json")
	if err := os.WriteFile(f, []byte(p.podman("inspect", name)), 0o600); err != nil {
		p.t.Fatal(err)
	}
	cs, err := LoadInspect(f)
	if err != nil {
		p.t.Fatal(err)
	}
	return Audit(cs, opts).Containers[0]
}

// residual is what a hardened container keeps on this host: rootless
// Podman on cgroup v1 ignores --memory and --pids-limit, so both scripts
// name the missing limits.
func (p *podmanEnv) residual() []string {
	if p.rootless && p.cgroupV1 {
		return []string{CodeNoLimits}
	}
	return nil
}

// home is a home directory where the lab's script looks for one: one of
// the test's own under /home as root, the test user's own when rootless
// (bound read-only; nothing in it is touched).
func (p *podmanEnv) home() string {
	if !p.rootless {
		return labHome(p.t)
	}
	home, err := os.UserHomeDir()
	if err != nil || strings.Count(strings.TrimSuffix(home, "/"), "/") != 2 || !strings.HasPrefix(home, "/home/") {
		testutil.Skip(p.t, fmt.Sprintf("the test user's home %q is not /home/NAME, where the lab's script looks for homes", home))
	}
	return home
}

// grantWanted is what the socket finding must say of the test's own
// service socket: root's privileges, or the test user's. Through the API
// the engine says whether it is rootless; inspect output leaves the
// socket's owner to decide.
func (p *podmanEnv) grantWanted(api bool) string {
	if !p.rootless {
		if api {
			return "whoever can write to it is root on the host: the podman engine behind it says it is not rootless"
		}
		return "whoever can write to it is root on the host: root owns the socket"
	}
	u, err := user.Current()
	if err != nil {
		p.t.Fatal(err)
	}
	why := "that user owns the socket, so an engine that made it runs as the user"
	if api {
		why = "the podman engine behind it says it is rootless"
	}
	return fmt.Sprintf("whoever can write to it has the privileges of %s (uid %s) on the host, not root's: %s", u.Username, u.Uid, why)
}

func TestPodmanEachLabFaultAloneOnAHardenedBase(t *testing.T) {
	podmanLabFaults(t, requirePodman(t, false))
}

func TestPodmanEachLabFaultAloneOnAHardenedBaseRootless(t *testing.T) {
	podmanLabFaults(t, requirePodman(t, true))
}

// rootlessCases are the faults whose audit differs under rootless Podman,
// the ones the rootless suite runs: its residual on cgroup v1, its home,
// its networking, its socket (the user's privileges, not root's) and its
// root (the user).
var rootlessCases = map[string]bool{"hardened": true, "home": true, "socket": true, "network": true, "hostnet": true, "root": true}

// podmanLabFaults starts from a hardened container with a workspace bind,
// which both scripts audit clean (but for the host's residual), and adds
// one fault of the lab at a time: the five and the privilege settings its
// script checks. Whatever the lab's script names, agentbox names too, read
// through the API and from inspect output; the fault's own code is among
// them.
func podmanLabFaults(t *testing.T, p *podmanEnv) {
	t.Setenv("ENGINE", "podman") // the lab's script: podman inspect, podman network
	home, project := p.home(), t.TempDir()
	inner, open := p.network("inner", true), p.network("open", false)
	opts := Options{HomeDirs: []string{home}}
	tests := []struct {
		name string
		edit func(args []string) []string
		cmd  []string
		// code is the fault's own: the lab's script names it, and so
		// must agentbox. extra are codes agentbox names that the lab's
		// script has no check for.
		code  string
		extra []string
		// docker are codes the lab's script names for the same fault on
		// Docker (TestDockerEachLabFaultAloneOnAHardenedBase) and cannot
		// see on Podman, for the reason blind gives: agentbox names them.
		docker []string
		blind  string
	}{
		{name: "hardened"},
		{name: "home", edit: add("-v", home+":/home/agent:ro"), code: CodeHomeDirectory},
		{name: "socket", edit: add("-v", p.sock+":/run/podman/podman.sock"), code: CodeContainerSocket},
		{name: "secret", edit: add("-e", "GITHUB_TOKEN="+fakeToken), code: CodeSecretInEnv},
		{
			name: "network", edit: replace("--network", open),
			docker: []string{CodeNetworkPolicy},
			blind:  "podman network inspect spells the flag \"internal\", the script reads \"Internal\" and reports it not available",
		},
		{
			name: "autoapprove", edit: add("-v", p.sock+":/run/podman/podman.sock"),
			cmd:  []string{"codex", "--dangerously-bypass-approvals-and-sandbox"},
			code: CodeContainerSocket, extra: []string{CodeAutoApprove},
		},
		{
			name: "hostnet", edit: replace("--network", "host"), code: CodeHostNetwork,
			docker: []string{CodeNetworkPolicy},
			blind:  "podman inspect lists no network for host mode, where Docker lists the host network, which is not internal",
		},
		{name: "privileged", edit: add("--privileged"), code: CodePrivileged},
		{name: "capadd", edit: add("--cap-add", "SYS_ADMIN"), code: CodeCapsAdded},
		{
			name: "capadd-netraw", edit: add("--cap-add", "NET_RAW"),
			docker: []string{CodeCapsAdded},
			blind:  "podman 4.3's inspect leaves CapAdd empty for NET_RAW (its comparison list still holds it); EffectiveCaps has it",
		},
		{name: "root", edit: replace("--user", "0:0"), code: CodeRunsAsRoot},
		{name: "writable-root", edit: drop("--read-only"), code: CodeWritableRoot},
		{name: "new-privileges", edit: drop("--security-opt", "no-new-privileges"), code: CodeNewPrivileges},
		{name: "no-limits", edit: drop("--memory", "64m"), code: CodeNoLimits},
	}
	for _, tc := range tests {
		if p.rootless && !rootlessCases[tc.name] {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			p.t = t
			args := append(hardenedArgs(t, inner), "-v", project+":/workspace")
			if tc.edit != nil {
				args = tc.edit(args)
			}
			name := p.container(tc.name, append(append(args, testutil.PodmanImage), tc.cmd...)...)
			api := p.audit(name, opts)
			lab := labCodes(t, name, project)
			if tc.code == "" && tc.docker == nil {
				p.checkClean(api, lab, project)
				return
			}
			if tc.code != "" && !slices.Contains(lab, tc.code) {
				t.Errorf("the lab's script does not name %s for this fault (it names %v): the case no longer tests it", tc.code, lab)
			}
			for _, code := range tc.docker {
				if slices.Contains(lab, code) {
					t.Errorf("the lab's script now names %s on Podman too: %q no longer holds, make it the case's code", code, tc.blind)
				}
			}
			want := slices.Concat(lab, tc.extra, tc.docker)
			// Inspect output cannot say whether a network is internal:
			// agentbox names every code from it too, unknown or known.
			for route, r := range map[string]ContainerReport{"through the API": api, "from podman inspect output": p.auditInspect(name, opts)} {
				got := failing(r.Findings)
				for _, code := range want {
					if !slices.Contains(got, code) {
						t.Errorf("%s: agentbox does not name %s, which the lab's script names (or the case wants); agentbox names %v", route, code, got)
					}
				}
			}
			if tc.code == CodeContainerSocket {
				p.checkSocketGrant(api, true)
				p.checkSocketGrant(p.auditInspect(name, opts), false)
			}
		})
	}
}

// checkClean: the hardened base audits clean by both scripts, but for the
// host's residual, with the project directory as the presumed workspace.
func (p *podmanEnv) checkClean(r ContainerReport, lab []string, project string) {
	t := p.t
	got, want := failing(r.Findings), p.residual()
	if !slices.Equal(got, want) || !slices.Equal(lab, want) {
		t.Fatalf("the hardened base does not audit clean (but for %v): agentbox %v, the lab's script %v", want, got, lab)
	}
	if r.Model.PresumedWorkspace != project {
		t.Errorf("presumed workspace %q, want %s", r.Model.PresumedWorkspace, project)
	}
	if r.Model.UserNS == Unknown || p.rootless && r.Model.UserNS != Yes {
		t.Errorf("user namespace %s: rootless Podman runs every container in the user's", r.Model.UserNS)
	}
}

// checkSocketGrant: the finding on the test's own service socket says
// whose privileges it grants, through the API (api) or from inspect output.
func (p *podmanEnv) checkSocketGrant(r ContainerReport, api bool) {
	t := p.t
	want := p.grantWanted(api)
	i := slices.IndexFunc(r.Findings, func(f Finding) bool { return f.Code == CodeContainerSocket })
	if i < 0 {
		t.Fatalf("no %s finding", CodeContainerSocket)
	}
	if d := r.Findings[i].Detail; !strings.Contains(d, want) || p.rootless && strings.Contains(d, "root on the host") {
		t.Errorf("socket finding (api %t): %q, want it to say %q", api, d, want)
	}
	m := slices.IndexFunc(r.Model.Mounts, func(m Mount) bool { return m.Grant != nil })
	if m < 0 {
		t.Fatalf("no mount has a socket grant: %+v", r.Model.Mounts)
	}
	g := r.Model.Mounts[m].Grant
	wantRoot, wantEngine := Yes, ""
	if p.rootless {
		wantRoot = No
	}
	if api {
		wantEngine = "podman"
	}
	if g.Root != wantRoot || g.Engine != wantEngine || g.UID != os.Geteuid() {
		t.Errorf("grant %+v (api %t): want root=%s, engine %q, owned by uid %d", g, api, wantRoot, wantEngine, os.Geteuid())
	}
}
