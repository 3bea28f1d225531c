package deploy

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/audit/manifest"
	"github.com/agentbox/agentbox/kube"
	. "github.com/agentbox/agentbox/launcher"
	"github.com/agentbox/agentbox/policy"
)

// kubeConfig is a kube invocation in a fresh workspace, recording to a
// fresh state directory.
func kubeConfig(t *testing.T) KubeConfig {
	t.Helper()
	ws, state := t.TempDir(), t.TempDir()
	getenv := func(k string) string {
		if k == "AGENTBOX_STATE_DIR" {
			return state
		}
		return ""
	}
	return KubeConfig{
		Policy: policy.Policy{Workspace: ws}, Cwd: ws, Getenv: getenv, Environ: []string{"PATH=/usr/bin:/bin", "HOME=/root"},
		Agent: "codex", Image: "example.org/agent:1", GatewayImage: "example.org/gateway:1", GatewayIP: "10.96.0.86",
		OutDir: filepath.Join(t.TempDir(), "out"),
	}
}

func TestKubeWritesAnAuditedManifest(t *testing.T) {
	cfg := kubeConfig(t)
	l, err := net.Listen("unix", filepath.Join(cfg.Cwd, "editor.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var out, errw bytes.Buffer
	if err := KubeMain(t.Context(), cfg, &out, &errw); err != nil {
		t.Fatalf("KubeMain: %v\n%s", err, errw.String())
	}
	p := filepath.Join(cfg.OutDir, kube.ManifestFile)
	cs, err := manifest.LoadKube([]string{p}, manifest.KubeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 2 {
		t.Fatalf("%d containers in %s, want the agent and the gateway", len(cs), p)
	}
	for _, want := range []string{"wrote " + p, "restricted (latest): allowed", "accepted network-policy-not-applied", "residual seccomp-runtime-default", "next: create the gateway's key Secret", "0 finding(s)."} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, out.String())
		}
	}
	// The plan is a pod's (policy.TargetKubernetes): this host's LSM and
	// the sockets in its workspace say nothing about the pod.
	for _, host := range []string{"residual lsm-unavailable", "residual apparmor-profile-not-loaded", "residual workspace-socket-after-launch"} {
		if strings.Contains(out.String(), host) {
			t.Errorf("summary has the host-specific %q:\n%s", host, out.String())
		}
	}
	// A second rendering replaces the first.
	if err := KubeMain(t.Context(), cfg, &out, &errw); err != nil {
		t.Fatalf("second KubeMain: %v", err)
	}
	ents, _ := os.ReadDir(filepath.Dir(cfg.OutDir))
	if len(ents) != 1 {
		t.Errorf("%d entries beside the output, want it alone (no temp directory left)", len(ents))
	}
}

// --format agent-sandbox writes a SandboxTemplate and a Sandbox that pass
// the same audit and Pod Security evaluation.
func TestKubeWritesAgentSandbox(t *testing.T) {
	cfg := kubeConfig(t)
	cfg.Format = kube.FormatAgentSandbox
	var out, errw bytes.Buffer
	if err := KubeMain(t.Context(), cfg, &out, &errw); err != nil {
		t.Fatalf("KubeMain: %v\n%s", err, errw.String())
	}
	for _, want := range []string{"pod security SandboxTemplate/agentbox-agent/agent: restricted (latest): allowed", "pod security Sandbox/agentbox-agent/agent: restricted (latest): allowed", "0 finding(s)."} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, out.String())
		}
	}
	cfg.Format, cfg.OutDir = "helm", filepath.Join(t.TempDir(), "out")
	if err := KubeMain(t.Context(), cfg, &out, &errw); KindOf(err) != KindUsage || !strings.Contains(err.Error(), "--format") {
		t.Errorf("--format helm: %v, want a usage error naming --format", err)
	}
}

// A rendering that fails its own audit (a credential the policy lets
// through to the agent) writes nothing and names the finding.
func TestKubeRefusesAFailingRenderingAndWritesNothing(t *testing.T) {
	cfg := kubeConfig(t)
	cfg.Environ = append(cfg.Environ, "GITHUB_TOKEN=ghp_0123456789abcdefghijklmnopqrstuvwxyz")
	cfg.Policy.Env.Allow = []string{"GITHUB_TOKEN"}
	var out, errw bytes.Buffer
	err := KubeMain(t.Context(), cfg, &out, &errw)
	if KindOf(err) != KindRefused || ExitCode(err) != ExitRefused {
		t.Fatalf("err = %v (kind %v), want a refusal", err, KindOf(err))
	}
	if !strings.Contains(errw.String(), "secret-in-environment GITHUB_TOKEN") || !strings.Contains(errw.String(), "nothing was written") {
		t.Errorf("refusal does not name the finding:\n%s", errw.String())
	}
	ents, _ := os.ReadDir(filepath.Dir(cfg.OutDir))
	if len(ents) != 0 {
		t.Errorf("%d entries left beside the output, want none", len(ents))
	}
}

func TestKubeKeepsAForeignOutputDirectory(t *testing.T) {
	cfg := kubeConfig(t)
	if err := os.MkdirAll(cfg.OutDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfg.OutDir, "mine.txt"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errw bytes.Buffer
	err := KubeMain(t.Context(), cfg, &out, &errw)
	if KindOf(err) != KindUsage || !strings.Contains(err.Error(), "mine.txt") {
		t.Fatalf("err = %v, want a usage error naming mine.txt", err)
	}
	if b, _ := os.ReadFile(filepath.Join(cfg.OutDir, "mine.txt")); string(b) != "x" {
		t.Error("the foreign file was changed")
	}
}
