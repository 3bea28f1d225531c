package deploy

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/agentbox/agentbox/audit"
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

// --profiles files writes agentbox's profiles beside the manifest and the
// installer; the agent's Localhost seccomp profile is read from the files
// and compared (no seccomp residual), the installer's findings are
// accepted for its containers alone, and a second rendering replaces the
// first, profile directories and all.
func TestKubeWritesProfileFiles(t *testing.T) {
	cfg := kubeConfig(t)
	cfg.Profiles, cfg.InstallerImage, cfg.WorkspaceSize = kube.ProfilesFiles, "example.org/installer:1", "10Gi"
	var out, errw bytes.Buffer
	if err := KubeMain(t.Context(), cfg, &out, &errw); err != nil {
		t.Fatalf("KubeMain: %v\n%s", err, errw.String())
	}
	for _, f := range []string{"seccomp/agentbox/agentbox-amd64.json", "seccomp/agentbox/agentbox-arm64.json", "apparmor/agentbox-default"} {
		if _, err := os.Stat(filepath.Join(cfg.OutDir, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	for _, want := range []string{"accepted pod security DaemonSet/agentbox-profile-installer", "accepted capabilities-added CAP_MAC_ADMIN (DaemonSet/agentbox-profile-installer/apparmor)", "pod security Pod/agentbox-agent/agent: restricted (latest): allowed", "0 finding(s)."} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "seccomp-runtime-default") {
		t.Errorf("a seccomp residual with agentbox's own profile:\n%s", out.String())
	}
	if err := KubeMain(t.Context(), cfg, &out, &errw); err != nil {
		t.Fatalf("second KubeMain: %v", err)
	}
}

// The installer's acceptances cover its containers alone: the same
// capability on the agent fails the audit.
func TestKubeInstallerAcceptancesStayWithTheInstaller(t *testing.T) {
	cfg := kubeConfig(t)
	cfg.Profiles, cfg.InstallerImage = kube.ProfilesFiles, "example.org/installer:1"
	plan, opts, err := kubeInputs(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	out, err := kube.Render(plan, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range out.Objects {
		if p, ok := o.(interface{ GetName() string }); ok && p.GetName() == kube.AgentName {
			if pod, ok := o.(*corev1.Pod); ok {
				pod.Spec.Containers[0].SecurityContext.Capabilities.Add = []corev1.Capability{"MAC_ADMIN"}
			}
		}
	}
	if err := out.WriteManifest(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := writeKubeFiles(dir, out); err != nil {
		t.Fatal(err)
	}
	r, err := auditKube(t.Context(), dir, plan, out)
	if err != nil {
		t.Fatal(err)
	}
	fs := r.Unaccepted()
	// Two failures: the finding, and the agent's pod, which Pod Security
	// restricted forbids (the installer's exemption is not the agent's).
	if len(fs) != 1 || fs[0].Code != audit.CodeCapsAdded || kubeFailures(r, out) != 2 {
		t.Errorf("unaccepted %+v (%d failures), want the agent's added capability and its pod", fs, kubeFailures(r, out))
	}
}
