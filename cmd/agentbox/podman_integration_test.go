//go:build integration && linux

package main

import (
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

// TestAuditPodman runs `agentbox audit` on real Podman containers: rootful
// in the root run, rootless in the rootless suite (this package's tests run
// in both). It reads them through the test's own Podman API service (named
// by --host, and by CONTAINER_HOST) and from `podman inspect` output: a
// hardened container with a workspace bind audits clean, but for what the
// host cannot give (resource limits, rootless on cgroup v1), and the engine
// socket bound into one says whose privileges it grants: root's under
// rootful Podman, the user's under rootless.
func TestAuditPodman(t *testing.T) {
	testutil.RequirePodman(t)
	sock := testutil.PodmanService(t)
	c := newPodmanCLI(t)
	inner := c.podman("network", "create", "--internal", c.prefix+"-inner")
	t.Cleanup(func() { exec.Command("podman", "network", "rm", "-f", inner).Run() })
	project := t.TempDir()
	hardened := []string{
		"--read-only", "--cap-drop", "ALL", "--security-opt", "no-new-privileges",
		"--security-opt", "seccomp=" + testutil.SeccompProfile(t), "--user", "1000:1000",
		"--network", inner, "--memory", "64m", "--pids-limit", "64", "-v", project + ":/workspace",
	}
	clean := c.container("clean", hardened...)
	exposed := c.container("socket", append(hardened, "-v", sock+":/run/podman/podman.sock")...)
	env := isolatedEnv(t)

	t.Run("hardened through --host", func(t *testing.T) {
		r := runIn(t, env, "", "audit", "--engine", "podman", "--host", sock, "--json", clean)
		rep := decodeAudit(t, r)
		if got, want := rep.failing(), c.residual(); !slices.Equal(got, want) || r.code != exitCodeFor(want) {
			t.Errorf("exit %d, failing %v; want exit %d, failing %v\n%s", r.code, got, exitCodeFor(want), want, r.stderr)
		}
		if ws := rep.Containers[0].Model.PresumedWorkspace; ws != project {
			t.Errorf("presumed workspace %q, want %s", ws, project)
		}
	})
	t.Run("socket through CONTAINER_HOST", func(t *testing.T) {
		r := runIn(t, append(env, "CONTAINER_HOST=unix://"+sock), "", "audit", "--engine", "podman", "--json", exposed)
		rep := decodeAudit(t, r)
		c.checkSocket(t, r, rep, c.grantAPI())
		if got := rep.grant(); got == nil || got.Engine != "podman" || got.Root != c.grantRoot() {
			t.Errorf("socket_grant %+v: want engine podman, root %s", got, c.grantRoot())
		}
		text := runIn(t, append(env, "CONTAINER_HOST=unix://"+sock), "", "audit", "--engine", "podman", "--color", "never", exposed)
		if !strings.Contains(text.stdout, c.grantAPI()) {
			t.Errorf("the text report does not say whose privileges the socket grants (%q):\n%s", c.grantAPI(), text.stdout)
		}
	})
	t.Run("socket from podman inspect output", func(t *testing.T) {
		f := filepath.Join(t.TempDir(), "inspect.json")
		if err := os.WriteFile(f, []byte(c.podman("inspect", exposed)), 0o600); err != nil {
			t.Fatal(err)
		}
		r := runIn(t, env, "", "audit", "--json", f)
		rep := decodeAudit(t, r)
		c.checkSocket(t, r, rep, c.grantOwner())
		if got := rep.grant(); got == nil || got.Engine != "" || got.Root != c.grantRoot() {
			t.Errorf("socket_grant %+v: want no engine asked, root %s", got, c.grantRoot())
		}
	})
}

// podmanCLI is the test's Podman: root's or the user's.
type podmanCLI struct {
	t        *testing.T
	prefix   string
	rootless bool
	cgroupV1 bool
	user     *user.User
}

func newPodmanCLI(t *testing.T) *podmanCLI {
	t.Helper()
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	c := &podmanCLI{t: t, prefix: "abx-cli-" + hex.EncodeToString(b), rootless: os.Geteuid() != 0, user: u}
	c.cgroupV1 = c.podman("info", "--format", "{{.Host.CgroupsVersion}}") == "v1"
	return c
}

func (c *podmanCLI) podman(args ...string) string {
	c.t.Helper()
	out, err := exec.Command("podman", args...).Output()
	if err != nil {
		c.t.Fatalf("podman %s: %v\n%s%s", strings.Join(args, " "), err, out, stderrOf(err))
	}
	return strings.TrimSpace(string(out))
}

func stderrOf(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(ee.Stderr)
	}
	return ""
}

// container runs a container that only sleeps, removed at cleanup.
func (c *podmanCLI) container(name string, args ...string) string {
	c.t.Helper()
	name = c.prefix + "-" + name
	c.t.Cleanup(func() { exec.Command("podman", "rm", "-f", "-t", "0", name).Run() })
	c.podman(append(append([]string{"run", "-d", "--name", name}, args...), testutil.PodmanImage)...)
	return name
}

// residual is what a hardened container keeps here: rootless Podman on
// cgroup v1 ignores --memory and --pids-limit.
func (c *podmanCLI) residual() []string {
	if c.rootless && c.cgroupV1 {
		return []string{"no-resource-limits"}
	}
	return nil
}

func exitCodeFor(failing []string) int {
	if len(failing) > 0 {
		return 1
	}
	return 0
}

// grantRoot is the socket grant's root answer: yes under rootful Podman.
func (c *podmanCLI) grantRoot() string {
	if c.rootless {
		return "no"
	}
	return "yes"
}

// grantAPI is what the socket finding says read through the API, where the
// engine says whether it is rootless.
func (c *podmanCLI) grantAPI() string {
	if !c.rootless {
		return "whoever can write to it is root on the host: the podman engine behind it says it is not rootless"
	}
	return fmt.Sprintf("whoever can write to it has the privileges of %s (uid %s) on the host, not root's: the podman engine behind it says it is rootless", c.user.Username, c.user.Uid)
}

// grantOwner is what it says from inspect output: the socket's owner
// decides.
func (c *podmanCLI) grantOwner() string {
	if !c.rootless {
		return "whoever can write to it is root on the host: root owns the socket"
	}
	return fmt.Sprintf("whoever can write to it has the privileges of %s (uid %s) on the host, not root's: that user owns the socket", c.user.Username, c.user.Uid)
}

func (c *podmanCLI) checkSocket(t *testing.T, r result, rep auditJSON, want string) {
	t.Helper()
	if r.code != 1 {
		t.Errorf("exit %d, want 1 (a finding fails)\n%s", r.code, r.stderr)
	}
	f := rep.finding("container-socket-mounted")
	if f == nil || !strings.Contains(f.Detail, want) || c.rootless && strings.Contains(f.Detail, "root on the host") {
		t.Errorf("socket finding %+v, want its detail to say %q", f, want)
	}
}

// auditJSON is the part of `agentbox audit --json` the test reads.
type auditJSON struct {
	Containers []struct {
		Findings []auditFinding `json:"findings"`
		Model    struct {
			PresumedWorkspace string `json:"presumed_workspace"`
			Mounts            []struct {
				Grant *grantJSON `json:"socket_grant"`
			} `json:"mounts"`
		} `json:"model"`
	} `json:"containers"`
}

type grantJSON struct {
	Root   string `json:"root"`
	Engine string `json:"engine"`
}

type auditFinding struct {
	Code     string `json:"code"`
	Severity string `json:"severity"`
	Detail   string `json:"detail"`
	Accepted bool   `json:"accepted"`
}

func decodeAudit(t *testing.T, r result) auditJSON {
	t.Helper()
	var rep auditJSON
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || len(rep.Containers) != 1 {
		t.Fatalf("agentbox audit --json (exit %d): %v\n%s\n%s", r.code, err, r.stdout, r.stderr)
	}
	return rep
}

func (a auditJSON) failing() []string {
	var out []string
	for _, f := range a.Containers[0].Findings {
		if f.Severity != "info" && !f.Accepted {
			out = append(out, f.Code)
		}
	}
	return out
}

func (a auditJSON) finding(code string) *auditFinding {
	for i, f := range a.Containers[0].Findings {
		if f.Code == code {
			return &a.Containers[0].Findings[i]
		}
	}
	return nil
}

func (a auditJSON) grant() *grantJSON {
	for _, m := range a.Containers[0].Model.Mounts {
		if m.Grant != nil {
			return m.Grant
		}
	}
	return nil
}
