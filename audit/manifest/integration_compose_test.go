//go:build integration

package manifest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/agentbox/agentbox/audit"
	"github.com/agentbox/agentbox/internal/testutil"
)

// labCompose holds the lab's faults, one per service, and a hardened service.
// Version 2.4 keeps it readable by docker-compose 1.29 (Python) as well as
// by compose-go.
const labCompose = `version: "2.4"
services:
  home:
    image: agentbox-test/busybox:latest
    volumes: ["${FAKE_HOME}/.ssh:/root/.ssh:ro"]
  socket:
    image: agentbox-test/busybox:latest
    volumes: ["/var/run/docker.sock:/var/run/docker.sock"]
  secret:
    image: agentbox-test/busybox:latest
    environment:
      GITHUB_TOKEN: ${FAKE_TOKEN}
  network:
    image: agentbox-test/busybox:latest
    networks: [open]
  autoapprove:
    image: agentbox-test/busybox:latest
    command: ["codex", "--dangerously-bypass-approvals-and-sandbox"]
  privileged:
    image: agentbox-test/busybox:latest
    privileged: true
  capadd:
    image: agentbox-test/busybox:latest
    cap_add: [SYS_ADMIN]
  hostnet:
    image: agentbox-test/busybox:latest
    network_mode: host
  unconfined:
    image: agentbox-test/busybox:latest
    security_opt: ["seccomp=unconfined"]
  hardened:
    image: agentbox-test/busybox:latest
    read_only: true
    cap_drop: [ALL]
    security_opt: ["no-new-privileges:true", "seccomp=${SECCOMP_PROFILE}"]
    user: "1000:1000"
    networks: [inner]
    mem_limit: 64m
    pids_limit: 64
networks:
  open: {}
  inner:
    internal: true
`

// labWant is the code each lab service must be named for.
var labWant = map[string]string{
	"home": CodeHomeDirectory, "socket": CodeContainerSocket, "secret": CodeSecretInEnv,
	"network": CodeNetworkPolicy, "autoapprove": CodeAutoApprove, "privileged": CodePrivileged,
	"capadd": CodeCapsAdded, "hostnet": CodeHostNetwork, "unconfined": CodeSeccompUnconfined,
}

func checkLab(t *testing.T, how string, cs []Container, opts Options) {
	t.Helper()
	r := Audit(cs, opts)
	seen := map[string]bool{}
	for _, c := range r.Containers {
		svc := c.Name
		if i := strings.Index(svc, "_"); i >= 0 { // project_service_1
			svc = strings.TrimSuffix(svc[i+1:], "_1")
		}
		seen[svc] = true
		if svc == "hardened" {
			for _, f := range c.Findings {
				if f.Fails() {
					t.Errorf("%s: hardened: %s %s: %s", how, f.Code, f.Subject, f.Detail)
				}
			}
			continue
		}
		if !hasCode(c.Findings, labWant[svc]) {
			t.Errorf("%s: service %s: the audit does not name %s; it found %v", how, svc, labWant[svc], codesOf(c.Findings))
		}
	}
	if len(seen) != len(labWant)+1 {
		t.Errorf("%s: audited %v", how, seen)
	}
}

func TestComposeLab(t *testing.T) {
	d := requireDocker(t)
	compose := testutil.RequireBinary(t, "docker-compose", "docker-compose")
	home := testutil.FakeHome(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "compose.yaml")
	if err := os.WriteFile(file, []byte(labCompose), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"FAKE_HOME=" + home, "FAKE_TOKEN=" + fakeToken, "SECCOMP_PROFILE=" + testutil.SeccompProfile(t), "HOME=" + home}
	opts := Options{HomeDirs: []string{home}}

	// The static audit needs no engine.
	cs, err := LoadCompose(context.Background(), []string{file}, ComposeOptions{Env: env})
	if err != nil {
		t.Fatal(err)
	}
	checkLab(t, "compose file", cs, opts)

	// The same project run by docker-compose, audited through the engine.
	project := strings.ReplaceAll(d.prefix, "-", "")
	dc := func(args ...string) ([]byte, error) {
		cmd := exec.Command(compose, append([]string{"-p", project, "-f", file}, args...)...)
		cmd.Env = append(os.Environ(), env...)
		return cmd.CombinedOutput()
	}
	t.Cleanup(func() { dc("down", "-v", "--remove-orphans") })
	if out, err := dc("up", "--no-start"); err != nil {
		t.Fatalf("docker-compose up --no-start: %v\n%s", err, out)
	}
	var running []Container
	for svc := range labWant {
		running = append(running, d.startAndRead(project+"_"+svc+"_1"))
	}
	running = append(running, d.startAndRead(project+"_hardened_1"))
	checkLab(t, "running project", running, opts)
}

// startAndRead starts a created container (tolerating this VM's missing
// capability, see container) and reads it through the engine.
func (d *dockerEnv) startAndRead(name string) Container {
	d.t.Helper()
	if out, err := exec.Command("docker", "start", name).CombinedOutput(); err != nil && !strings.Contains(string(out), "unable to apply caps") {
		d.t.Fatalf("docker start %s: %v\n%s", name, err, out)
	}
	c, err := d.engine.Container(context.Background(), name)
	if err != nil {
		d.t.Fatal(err)
	}
	return c
}
