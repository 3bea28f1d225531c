//go:build integration

package audit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentbox/agentbox/internal/testutil"
)

// These tests run real containers on a local Docker engine. The engine is
// started by scripts/docker-up.sh and the image built, from local files only,
// by scripts/docker-images.sh; nothing is pulled. Containers get no traffic:
// they only sleep while the audit reads their configuration.

const testImage = "agentbox-test/busybox:latest"

// fakeToken has a token's shape and is worthless.
const fakeToken = "ghp_FAKEFAKEFAKEFAKEFAKEFAKEFAKEFAKE0000"

type dockerEnv struct {
	t      *testing.T
	prefix string
	engine *Engine
}

func requireDocker(t *testing.T) *dockerEnv {
	t.Helper()
	testutil.RequireRoot(t)
	testutil.RequireBinary(t, "docker", "docker.io")
	if err := exec.Command("docker", "info").Run(); err != nil {
		testutil.Skip(t, "no Docker engine answers on /var/run/docker.sock (run scripts/docker-up.sh)")
	}
	if err := exec.Command("docker", "image", "inspect", testImage).Run(); err != nil {
		script, _ := filepath.Abs(filepath.Join("..", "scripts", "docker-images.sh"))
		if out, err := exec.Command(script).CombinedOutput(); err != nil {
			t.Fatalf("build the test image with %s: %v\n%s", script, err, out)
		}
	}
	e, err := NewEngine("docker", "")
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return &dockerEnv{t: t, prefix: "abx-audit-" + hex.EncodeToString(b), engine: e}
}

func (d *dockerEnv) run(args ...string) string {
	d.t.Helper()
	out, err := exec.Command("docker", args...).CombinedOutput()
	if err != nil {
		d.t.Fatalf("docker %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// network creates a bridge network, internal or not, removed at cleanup.
func (d *dockerEnv) network(name string, internal bool) string {
	d.t.Helper()
	name = d.prefix + "-" + name
	args := []string{"network", "create"}
	if internal {
		args = append(args, "--internal")
	}
	d.run(append(args, name)...)
	d.t.Cleanup(func() { exec.Command("docker", "network", "rm", name).Run() })
	return name
}

// container creates and starts a container, removed at cleanup. This VM's
// capability bounding set lacks CAP_SYS_RESOURCE, so runc cannot start a
// container that asks for every capability; such a container stays created,
// and the audit reads its configuration all the same.
func (d *dockerEnv) container(name string, args ...string) string {
	d.t.Helper()
	name = d.prefix + "-" + name
	d.t.Cleanup(func() { exec.Command("docker", "rm", "-f", name).Run() })
	create := append([]string{"create", "--name", name}, args...)
	d.run(create...)
	out, err := exec.Command("docker", "start", name).CombinedOutput()
	// Under load this dockerd now and then fails its own network hook
	// (libnetwork-setkey: "no such file or directory") on a start that
	// succeeds when retried: the engine's fault, not the configuration
	// the test audits.
	for try := 0; err != nil && strings.Contains(string(out), "error running hook") && try < 3; try++ {
		d.t.Logf("docker start %s: the engine's network hook failed, retrying: %s", name, strings.TrimSpace(string(out)))
		time.Sleep(500 * time.Millisecond)
		out, err = exec.Command("docker", "start", name).CombinedOutput()
	}
	if err != nil {
		if !strings.Contains(string(out), "unable to apply caps") {
			d.t.Fatalf("docker start %s: %v\n%s", name, err, out)
		}
		d.t.Logf("%s stays created: this host cannot grant every capability (%s)", name, strings.TrimSpace(string(out)))
	}
	return name
}

func (d *dockerEnv) audit(name string, opts Options) []Finding {
	d.t.Helper()
	c, err := d.engine.Container(context.Background(), name)
	if err != nil {
		d.t.Fatal(err)
	}
	return Audit([]Container{c}, opts).Containers[0].Findings
}

func hasCode(fs []Finding, code string) bool {
	for _, f := range fs {
		if f.Code == code && f.Fails() {
			return true
		}
	}
	return false
}

func TestDockerFaults(t *testing.T) {
	d := requireDocker(t)
	home := testutil.FakeHome(t)
	open := d.network("open", false)
	opts := Options{HomeDirs: []string{home}}
	tests := []struct {
		name  string
		args  []string
		codes []string
	}{
		{"home", []string{"-v", filepath.Join(home, ".ssh") + ":/root/.ssh:ro", testImage}, []string{CodeHomeDirectory}},
		{"socket", []string{"-v", "/var/run/docker.sock:/var/run/docker.sock", testImage}, []string{CodeContainerSocket}},
		{"secret", []string{"-e", "GITHUB_TOKEN=" + fakeToken, testImage}, []string{CodeSecretInEnv}},
		{"network", []string{"--network", open, testImage}, []string{CodeNetworkPolicy}},
		{"autoapprove", []string{"-v", "/var/run/docker.sock:/var/run/docker.sock", testImage, "codex", "--dangerously-bypass-approvals-and-sandbox"}, []string{CodeAutoApprove}},
		{"privileged", []string{"--privileged", testImage}, []string{CodePrivileged}},
		{"capadd", []string{"--cap-add", "SYS_ADMIN", testImage}, []string{CodeCapsAdded}},
		// The lab's fault list puts host mode under "network policy never
		// applied", and its script names both codes.
		{"hostnet", []string{"--network", "host", testImage}, []string{CodeHostNetwork, CodeNetworkPolicy}},
		{"unconfined", []string{"--security-opt", "seccomp=unconfined", testImage}, []string{CodeSeccompUnconfined}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d.t = t
			name := d.container(tc.name, tc.args...)
			fs := d.audit(name, opts)
			for _, code := range tc.codes {
				if !hasCode(fs, code) {
					t.Errorf("the audit does not name %s; it found %v", code, codesOf(fs))
				}
			}
			for _, code := range labCodes(t, name, "") {
				if !hasCode(fs, code) {
					t.Errorf("the lab's script names %s and agentbox does not; agentbox found %v", code, codesOf(fs))
				}
			}
		})
	}
}

// labCodes runs the lab's audit script (reference material outside the
// project, named by AGENTBOX_LAB_AUDIT) on a container as an oracle and
// returns the finding codes it names. projectDir is its PROJECT_DIR.
func labCodes(t *testing.T, container, projectDir string) []string {
	t.Helper()
	script := os.Getenv("AGENTBOX_LAB_AUDIT")
	if script == "" {
		testutil.Skip(t, "AGENTBOX_LAB_AUDIT does not name the lab's audit-sandbox.sh")
		return nil
	}
	cmd := exec.Command("bash", script, container)
	cmd.Env = append(os.Environ(), "LABBOOK="+filepath.Join(t.TempDir(), "labbook.md"), "PROJECT_DIR="+projectDir)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if err != nil && (!errors.As(err, &ee) || ee.ExitCode() != 1) {
		t.Fatalf("%s %s: %v\n%s", script, container, err, out)
	}
	var codes []string
	for _, line := range strings.Split(string(out), "\n") {
		rest, ok := strings.CutPrefix(line, "  [")
		if code, _, found := strings.Cut(rest, "] "); ok && found {
			codes = append(codes, code)
		}
	}
	if err == nil && len(codes) != 0 || err != nil && len(codes) == 0 {
		t.Fatalf("the lab's script exit status disagrees with its findings %v:\n%s", codes, out)
	}
	return codes
}

func TestDockerAutoApproveAloneIsANote(t *testing.T) {
	d := requireDocker(t)
	inner := d.network("inner", true)
	name := d.container("yolo", hardenedArgs(t, inner, testImage, "claude", "--dangerously-skip-permissions")...)
	fs := d.audit(name, Options{})
	if hasCode(fs, CodeAutoApprove) || !strings.Contains(strings.Join(codesOf(fs), ","), "auto-approve-permission-mode info") {
		t.Errorf("auto-approve alone should be informational: %v", codesOf(fs))
	}
}

func hardenedArgs(t *testing.T, network string, tail ...string) []string {
	return append([]string{
		"--read-only", "--cap-drop", "ALL", "--security-opt", "no-new-privileges",
		"--security-opt", "seccomp=" + testutil.SeccompProfile(t), "--user", "1000:1000",
		"--network", network, "--memory", "64m", "--pids-limit", "64",
	}, tail...)
}

func TestDockerHardenedIsClean(t *testing.T) {
	d := requireDocker(t)
	inner := d.network("inner", true)
	name := d.container("hardened", hardenedArgs(t, inner, testImage)...)
	fs := d.audit(name, Options{})
	for _, f := range fs {
		if f.Fails() {
			t.Errorf("hardened container: %s %s: %s", f.Code, f.Subject, f.Detail)
		}
	}
}

// TestDockerProjectDirIsThePresumedWorkspace: a hardened container whose
// only read-write bind is its project directory audits clean without
// --workspace, by agentbox and by the lab's script; a second read-write bind
// is named by both.
func TestDockerProjectDirIsThePresumedWorkspace(t *testing.T) {
	d := requireDocker(t)
	inner := d.network("inner", true)
	project, extra := t.TempDir(), t.TempDir()
	tests := []struct {
		name      string
		args      []string
		want, lab []string
	}{
		{"project", []string{"-v", project + ":/workspace"}, nil, nil},
		{"project-and-keys", []string{"-v", project + ":/workspace", "-v", extra + ":/keys:ro"}, nil, nil},
		// Told the project directory, the lab's script names the other
		// bind; agentbox, with two read-write binds and no --workspace,
		// presumes neither and names both.
		{
			"second-bind",
			[]string{"-v", project + ":/workspace", "-v", extra + ":/out"},
			[]string{CodeExtraWritable, CodeExtraWritable},
			[]string{CodeExtraWritable},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d.t = t
			name := d.container(tc.name, hardenedArgs(t, inner, append(tc.args, testImage)...)...)
			c, err := d.engine.Container(context.Background(), name)
			if err != nil {
				t.Fatal(err)
			}
			r := Audit([]Container{c}, Options{})
			var got []string
			for _, f := range r.Unaccepted() {
				got = append(got, f.Code)
			}
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("agentbox names %v, want %v", codesOf(r.Containers[0].Findings), tc.want)
			}
			if tc.want == nil && r.Containers[0].Model.PresumedWorkspace != project {
				t.Errorf("presumed workspace %q, want %s", r.Containers[0].Model.PresumedWorkspace, project)
			}
			if lab := labCodes(t, name, project); strings.Join(lab, ",") != strings.Join(tc.lab, ",") {
				t.Errorf("the lab's script names %v, want %v", lab, tc.lab)
			}
		})
	}
}

// TestSocketUnderAnotherName binds the engine socket onto a file with an
// innocent name: the audit recognises it by device and inode.
func TestSocketUnderAnotherName(t *testing.T) {
	d := requireDocker(t)
	alias := filepath.Join(t.TempDir(), "innocent")
	if err := os.WriteFile(alias, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "--bind", "/run/docker.sock", alias).CombinedOutput(); err != nil {
		testutil.Skip(t, "cannot bind-mount the socket here: "+strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() { exec.Command("umount", alias).Run() })
	name := d.container("alias", "-v", alias+":/tmp/innocent", testImage)
	fs := d.audit(name, Options{})
	if !hasCode(fs, CodeContainerSocket) {
		t.Errorf("the socket under another name is not found: %v", codesOf(fs))
	}
}
