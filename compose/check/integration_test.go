//go:build integration

package check

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/agentbox/agentbox/audit"
	"github.com/agentbox/agentbox/compose"
	"github.com/agentbox/agentbox/internal/testutil"
)

// These tests run the project agentbox compose writes on a local Docker
// engine with docker-compose 1.29. The engine is started by
// scripts/docker-up.sh; the agent image (agentbox-test/busybox, whose codex
// is a stand-in that only sleeps) is built from local files by
// scripts/docker-images.sh, and the gateway image from the agentbox binary
// this test builds. Nothing is pulled. Traffic goes only to containers the
// test created: the gateway, and a test host on the egress network.

const testImage = "agentbox-test/busybox:latest"

// engineEnv is one compose project on the engine.
type engineEnv struct {
	t       *testing.T
	bin     string // the static agentbox binary under test
	project string // the compose project name
	ws, out string // workspace and output directory
	home    string // a fake home directory, never the real one
	files   []string
}

func requireEngine(t *testing.T) *engineEnv {
	t.Helper()
	testutil.RequireRoot(t)
	testutil.RequireBinary(t, "docker", "docker.io")
	testutil.RequireBinary(t, "docker-compose", "docker-compose")
	if err := exec.Command("docker", "info").Run(); err != nil {
		testutil.Skip(t, "no Docker engine answers on /var/run/docker.sock (run scripts/docker-up.sh)")
	}
	if err := exec.Command("docker", "image", "inspect", testImage).Run(); err != nil {
		script, _ := filepath.Abs(filepath.Join("..", "..", "scripts", "docker-images.sh"))
		if out, err := exec.Command(script).CombinedOutput(); err != nil {
			t.Fatalf("build the test image with %s: %v\n%s", script, err, out)
		}
	}
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	e := &engineEnv{t: t, project: "abxc" + hex.EncodeToString(b), bin: agentboxBinary(t)}
	e.ws = filepath.Join(t.TempDir(), "project")
	e.home = filepath.Join(t.TempDir(), "home", "ana")
	for _, d := range []string{e.ws, filepath.Join(e.home, ".ssh")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chown(e.ws, 1000, 1000); err != nil { // a workspace the agent's uid owns
		t.Fatal(err)
	}
	e.out = filepath.Join(e.ws, "agentbox-compose")
	e.files = []string{filepath.Join(e.out, compose.ComposeFile)}
	return e
}

// agentboxBinary is $AGENTBOX_BIN, or agentbox built static for this test,
// with agentbox-ext (which runs compose and audit) beside it.
func agentboxBinary(t *testing.T) string {
	if bin := os.Getenv("AGENTBOX_BIN"); bin != "" {
		return bin
	}
	dir := t.TempDir()
	for _, b := range [][]string{{"-o", filepath.Join(dir, "agentbox")}, {"-tags", "agentbox_ext", "-o", filepath.Join(dir, "agentbox-ext")}} {
		build := exec.Command("go", append(append([]string{"build", "-trimpath"}, b...), "../../cmd/agentbox")...)
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("build %s: %v\n%s", b[len(b)-1], err, out)
		}
	}
	return filepath.Join(dir, "agentbox")
}

// agentbox runs the binary under test in the workspace with a private
// state directory and the fake home as HOME.
func (e *engineEnv) agentbox(args ...string) (string, int) {
	e.t.Helper()
	cmd := exec.Command(e.bin, args...)
	cmd.Dir = e.ws
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + e.home, "TERM=dumb", "LANG=C.UTF-8",
		"AGENTBOX_STATE_DIR=" + e.t.TempDir(), "AGENTBOX_RUN_ROOT=" + e.t.TempDir(),
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	code := 0
	if x := (*exec.ExitError)(nil); errors.As(err, &x) {
		code = x.ExitCode()
	} else if err != nil {
		e.t.Fatal(err)
	}
	return out.String(), code
}

// dc runs docker-compose on the project's files plus extra override files.
func (e *engineEnv) dc(extra []string, args ...string) {
	e.t.Helper()
	full := []string{"-p", e.project}
	for _, f := range append(append([]string(nil), e.files...), extra...) {
		full = append(full, "-f", f)
	}
	if out, err := exec.Command("docker-compose", append(full, args...)...).CombinedOutput(); err != nil {
		e.t.Fatalf("docker-compose %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func (e *engineEnv) container(svc string) string { return e.project + "_" + svc + "_1" }

// exec runs a shell command in the agent container, as the agent.
func (e *engineEnv) exec(script string) (string, error) {
	out, err := exec.Command("docker", "exec", e.container(compose.AgentService), "sh", "-c", script).CombinedOutput()
	return string(out), err
}

// up writes the project, fills the key file with a fake key and starts it;
// everything it creates is removed at cleanup.
func (e *engineEnv) up() {
	e.t.Helper()
	out, code := e.agentbox("compose", "--agent", "codex", "--image", testImage, "--build")
	if code != 0 {
		e.t.Fatalf("agentbox compose exited %d:\n%s", code, out)
	}
	image := e.gatewayImage()
	e.t.Cleanup(func() { exec.Command("docker", "rmi", "-f", image).Run() })
	key, err := os.OpenFile(filepath.Join(e.out, compose.SecretsDir, "openai_api_key"), os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		e.t.Fatal(err)
	}
	key.WriteString("sk-test-not-a-real-key\n")
	key.Close()
	e.t.Cleanup(e.down)
	e.dc(nil, "config", "-q")
	e.dc(nil, "up", "-d")
	e.waitGateway()
}

func (e *engineEnv) down() {
	args := []string{"-p", e.project, "-f", e.files[0], "down", "-v", "--remove-orphans"}
	exec.Command("docker-compose", args...).Run()
	nets, _ := exec.Command("docker", "network", "ls", "-q", "--filter", "label=com.docker.compose.project="+e.project).Output()
	for _, n := range strings.Fields(string(nets)) {
		exec.Command("docker", "network", "rm", n).Run()
	}
}

func (e *engineEnv) gatewayImage() string {
	b, err := os.ReadFile(filepath.Join(e.out, compose.ComposeFile))
	if err != nil {
		e.t.Fatal(err)
	}
	var doc struct {
		Services map[string]struct {
			Image string `yaml:"image"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		e.t.Fatal(err)
	}
	return doc.Services[compose.GatewayService].Image
}

// healthScript asks the gateway's health route over plain TCP (busybox wget
// honours the proxy variables but not NO_PROXY).
const healthScript = `printf 'GET /_agentbox/health HTTP/1.0\r\nHost: gateway\r\n\r\n' | nc -w 3 gateway 8080`

// waitGateway waits until the gateway answers the agent, a bounded number of
// attempts: the gateway container starts before the agent but listens a
// moment later.
func (e *engineEnv) waitGateway() {
	e.t.Helper()
	var out string
	for i := 0; i < 100; i++ {
		out, _ = e.exec(healthScript)
		if strings.Contains(out, `{"status":"ok"}`) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	logs, _ := exec.Command("docker", "logs", e.container(compose.GatewayService)).CombinedOutput()
	e.t.Fatalf("the gateway does not answer the agent: %s\ngateway log:\n%s", out, logs)
}

// auditAgent runs `agentbox audit --json CONTAINER` on the running agent
// container, with no flags: the workspace comes from the agent's label, and
// the variables carrying the gateway key are recognised by its shape.
func (e *engineEnv) auditAgent() audit.Report {
	e.t.Helper()
	out, code := e.agentbox("audit", "--json", e.container(compose.AgentService))
	var r audit.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil || code > 1 {
		e.t.Fatalf("agentbox audit exited %d: %v\n%s", code, err, out)
	}
	if (len(r.Unaccepted()) > 0) != (code == 1) {
		e.t.Errorf("agentbox audit exited %d with %d failing findings", code, len(r.Unaccepted()))
	}
	return r
}

func TestComposeOnEngine(t *testing.T) {
	e := requireEngine(t)
	e.up()
	t.Run("boundary", e.checkBoundary)
	t.Run("egress-unreachable", e.checkEgress)
	t.Run("environment", e.checkEnvironment)
	t.Run("audit-clean", func(t *testing.T) { e.checkAuditClean(t, "the project as written") })
	t.Run("faults", e.checkFaults)
	t.Run("lab-clean", func(t *testing.T) { e.checkLabClean(t, "the project as written") })
	t.Run("audit-text", e.checkAuditText)
	t.Run("lab-faults", e.checkLabFaults)
}

// checkBoundary: / is read-only, no capabilities, no_new_privs, a seccomp
// filter, the output directory hidden, in the agent's own process and in a
// process started in the container.
func (e *engineEnv) checkBoundary(t *testing.T) {
	out, err := e.exec(`touch /probe 2>&1; for p in 1 self; do grep -E '^(CapEff|NoNewPrivs|Seccomp):' /proc/$p/status; done; id -u; ls -A ` + e.out + `; echo end`)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "Read-only file system") {
		t.Errorf("the agent wrote to /:\n%s", out)
	}
	for _, want := range []string{"CapEff:\t0000000000000000", "NoNewPrivs:\t1", "Seccomp:\t2"} {
		if strings.Count(out, want+"\n") != 2 {
			t.Errorf("want %q for PID 1 and for a new process:\n%s", want, out)
		}
	}
	if !strings.Contains(out, "1000\nend") {
		t.Errorf("the agent is not uid 1000, or sees the output directory's files:\n%s", out)
	}
}

// checkEgress: a test host on the egress network answers a peer there, and
// not the agent.
func (e *engineEnv) checkEgress(t *testing.T) {
	name := e.project + "-testhost"
	egress := e.project + "_" + compose.EgressNetwork
	t.Cleanup(func() { exec.Command("docker", "rm", "-f", name).Run() })
	if out, err := exec.Command("docker", "run", "-d", "--name", name, "--network", egress, testImage,
		"sh", "-c", "echo agentbox-test-host > /tmp/index.html && exec httpd -f -p 8081 -h /tmp").CombinedOutput(); err != nil {
		t.Fatalf("start the test host: %v\n%s", err, out)
	}
	ip, err := exec.Command("docker", "inspect", "-f", "{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}", name).Output()
	if err != nil {
		t.Fatal(err)
	}
	probe := fmt.Sprintf(`printf 'GET / HTTP/1.0\r\n\r\n' | nc -w 3 %s 8081`, strings.TrimSpace(string(ip)))
	reached := false
	for i := 0; i < 50 && !reached; i++ { // the positive control: a peer on egress reaches it
		out, _ := exec.Command("docker", "run", "--rm", "--network", egress, testImage, "sh", "-c", probe).CombinedOutput()
		reached = strings.Contains(string(out), "agentbox-test-host")
	}
	if !reached {
		t.Fatal("the test host does not answer on the egress network; the negative probe would prove nothing")
	}
	if out, _ := e.exec(probe); strings.Contains(out, "agentbox-test-host") {
		t.Errorf("the agent reached the test host on the egress network:\n%s", out)
	}
	if out, _ := e.exec(healthScript); !strings.Contains(out, `{"status":"ok"}`) {
		t.Errorf("the same probe does not reach the gateway from the agent:\n%s", out)
	}
	logs, err := exec.Command("docker", "logs", e.container(compose.GatewayService)).CombinedOutput()
	if err != nil || !strings.Contains(string(logs), `"kind":"health"`) {
		t.Errorf("the gateway's decision log has no health decision: %v\n%s", err, logs)
	}
}

// checkEnvironment: no credential-shaped variable but those carrying the
// per-sandbox gateway key, in the agent process's own environment.
func (e *engineEnv) checkEnvironment(t *testing.T) {
	out, err := e.exec(`tr '\0' '\n' < /proc/1/environ`)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	token := compose.ExistingToken(e.out)
	keys := 0
	for _, kv := range strings.Split(strings.TrimSpace(out), "\n") {
		name, value, _ := strings.Cut(kv, "=")
		switch {
		case value == token:
			keys++
		case audit.SecretName(name) || strings.HasPrefix(value, "sk-"):
			t.Errorf("credential-shaped variable %s in the agent's environment", name)
		}
	}
	if keys == 0 {
		t.Errorf("the agent has no gateway key:\n%s", out)
	}
}

func (e *engineEnv) checkAuditClean(t *testing.T, what string) {
	t.Helper()
	r := e.auditAgent()
	for _, f := range r.Unaccepted() {
		t.Errorf("%s: agentbox audit: %s %s: %s", what, f.Code, f.Subject, f.Detail)
	}
}

// checkFaults introduces each of the lab's faults through an override file,
// one at a time: the audit of the running agent and --check of the files
// name it; without the override the audit is clean and the gateway answers.
func (e *engineEnv) checkFaults(t *testing.T) {
	for _, fault := range labFaults {
		override := filepath.Join(t.TempDir(), fault.name+".yaml")
		if err := os.WriteFile(override, []byte(strings.ReplaceAll(fault.override, "HOME", e.home)), 0o644); err != nil {
			t.Fatal(err)
		}
		e.dc([]string{override}, "up", "-d")
		r := e.auditAgent()
		if !reportHas(r, fault.code) {
			t.Errorf("%s: the audit of the running agent does not name %s: %v", fault.name, fault.code, codes(r))
		}
		out, code := e.agentbox("compose", "--check", e.files[0], "--check", override)
		want := 1 // auto-approve alone is informational: named, not failing
		if fault.code == audit.CodeAutoApprove {
			want = 0
		}
		if !strings.Contains(out, fault.code) || code != want {
			t.Errorf("%s: agentbox compose --check exited %d (want %d), naming %s or not:\n%s", fault.name, code, want, fault.code, out)
		}
		e.dc(nil, "up", "-d")
		e.checkAuditClean(t, "after removing "+fault.name)
		e.waitGateway()
	}
}

func reportHas(r audit.Report, code string) bool {
	for _, c := range r.Containers {
		for _, f := range c.Findings {
			if f.Code == code {
				return true
			}
		}
	}
	return false
}

func codes(r audit.Report) []string {
	var out []string
	for _, c := range r.Containers {
		for _, f := range c.Findings {
			out = append(out, f.Code)
		}
	}
	return out
}

// TestComposeConfigVariants: docker-compose 1.29 accepts the claude and
// plain-command projects too.
func TestComposeConfigVariants(t *testing.T) {
	e := requireEngine(t)
	for _, args := range [][]string{{"--agent", "claude"}, {"--", "sh", "-c", "sleep 1"}} {
		out := filepath.Join(t.TempDir(), "box")
		msg, code := e.agentbox(append([]string{"compose", "--image", testImage, "--out", out}, args...)...)
		if code != 0 {
			t.Fatalf("agentbox compose %v exited %d:\n%s", args, code, msg)
		}
		cmd := exec.Command("docker-compose", "-p", e.project, "-f", filepath.Join(out, compose.ComposeFile), "config", "-q")
		if msg, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("docker-compose config %v: %v\n%s", args, err, msg)
		}
	}
}
