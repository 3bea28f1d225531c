package kube_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/agentbox/agentbox/audit"
	"github.com/agentbox/agentbox/kube"
	"github.com/agentbox/agentbox/seccomp"
	"github.com/agentbox/agentbox/seccomp/profiles"
)

func renderWith(t *testing.T, edit func(*kube.Options)) *kube.Output {
	t.Helper()
	o := testOptions()
	edit(&o)
	out, err := kube.Render(testPlan(), o)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func residualCodes(out *kube.Output) map[string]bool {
	m := map[string]bool{}
	for _, r := range out.Residuals {
		m[r.Code] = true
	}
	return m
}

func agentPod(t *testing.T, out *kube.Output) *corev1.Pod {
	t.Helper()
	for _, o := range out.Objects {
		if p, ok := o.(*corev1.Pod); ok {
			return p
		}
	}
	t.Fatal("no agent pod")
	return nil
}

// The profile modes: runtime keeps the residual; files and spo point the
// agent at agentbox's profile for the nodes' architecture, with no
// seccomp residual.
func TestRenderProfileModes(t *testing.T) {
	rt := render(t)
	if !residualCodes(rt)["seccomp-runtime-default"] || agentPod(t, rt).Spec.SecurityContext.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("runtime: residuals %v, want seccomp-runtime-default and RuntimeDefault", residualCodes(rt))
	}
	files := renderWith(t, func(o *kube.Options) { o.Profiles, o.InstallerImage = kube.ProfilesFiles, "example.org/installer:1" })
	sc := agentPod(t, files).Spec.SecurityContext
	if residualCodes(files)["seccomp-runtime-default"] || residualCodes(files)["apparmor-runtime-default"] ||
		sc.SeccompProfile.Type != corev1.SeccompProfileTypeLocalhost || *sc.SeccompProfile.LocalhostProfile != "agentbox/agentbox-amd64.json" ||
		sc.AppArmorProfile == nil || *sc.AppArmorProfile.LocalhostProfile != "agentbox-default" || agentPod(t, files).Spec.NodeSelector["kubernetes.io/arch"] != "amd64" {
		t.Errorf("files: residuals %v, securityContext %+v", residualCodes(files), sc)
	}
	// The files are agentbox run's own: the generated profile and the
	// rendered AppArmor profile.
	want, err := profiles.Default().JSON(specsArch(t, "amd64"))
	if err != nil {
		t.Fatal(err)
	}
	aa, err := os.ReadFile("../apparmor/agentbox-default")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(files.Files["seccomp/agentbox/agentbox-amd64.json"], want) || !bytes.Equal(files.Files["apparmor/agentbox-default"], aa) {
		t.Error("the written profiles are not agentbox's generated ones")
	}
	spo := renderWith(t, func(o *kube.Options) { o.Profiles, o.Arch = kube.ProfilesSPO, "arm64" })
	sc = agentPod(t, spo).Spec.SecurityContext
	if residualCodes(spo)["seccomp-runtime-default"] || !residualCodes(spo)["apparmor-runtime-default"] ||
		*sc.SeccompProfile.LocalhostProfile != "operator/agentbox-arm64.json" || len(spo.Files) != 0 || spo.Installer != nil {
		t.Errorf("spo: residuals %v, securityContext %+v", residualCodes(spo), sc)
	}
}

func specsArch(t *testing.T, goarch string) specs.Arch {
	t.Helper()
	a, err := profiles.ArchForGOARCH(goarch)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// The SeccompProfile is agentbox's profile, rule for rule: both compile to
// the same filter semantics (no syscall allowed by one is denied by the
// other).
func TestRenderSeccompProfileIsAgentboxs(t *testing.T) {
	out := renderWith(t, func(o *kube.Options) { o.Profiles = kube.ProfilesSPO })
	var sp *kube.SeccompProfile
	for _, o := range out.Objects {
		if x, ok := o.(*kube.SeccompProfile); ok {
			sp = x
		}
	}
	if sp == nil || sp.Name != "agentbox-amd64" || sp.Namespace != "" {
		t.Fatalf("SeccompProfile %+v, want the cluster-scoped agentbox-amd64", sp)
	}
	b, err := json.Marshal(sp.Spec)
	if err != nil {
		t.Fatal(err)
	}
	got, err := seccomp.Parse("spo", b, seccomp.Target{})
	if err != nil {
		t.Fatal(err)
	}
	oci := profiles.Default().OCI(specsArch(t, "amd64"))
	if got.DefaultAction != oci.DefaultAction || len(got.Syscalls) != len(oci.Syscalls) || len(seccomp.Weaknesses(got)) != 0 {
		t.Fatalf("the SeccompProfile differs from agentbox's: %d rules vs %d, weaknesses %v", len(got.Syscalls), len(oci.Syscalls), seccomp.Weaknesses(got))
	}
	for i := range oci.Syscalls {
		g, w := got.Syscalls[i], oci.Syscalls[i]
		if strings.Join(g.Names, ",") != strings.Join(w.Names, ",") || g.Action != w.Action || len(g.Args) != len(w.Args) || (w.ErrnoRet != nil) != (g.ErrnoRet != nil) {
			t.Errorf("rule %d: %+v, want %+v", i, g, w)
		}
	}
}

// The audit reads the agent's Localhost profile and can fail it: a
// profile file that allows ptrace is weak, a missing one unknown, and a
// SeccompProfile that allows ptrace weak.
func TestAuditReadsTheLocalhostProfile(t *testing.T) {
	files := renderWith(t, func(o *kube.Options) { o.Profiles, o.InstallerImage = kube.ProfilesFiles, "example.org/installer:1" })
	dir := writeOutput(t, files)
	prof := filepath.Join(dir, "seccomp", "agentbox", "agentbox-amd64.json")
	var p map[string]any
	b, _ := os.ReadFile(prof)
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	p["syscalls"] = append(p["syscalls"].([]any), map[string]any{"names": []string{"ptrace"}, "action": "SCMP_ACT_ALLOW"})
	b, _ = json.Marshal(p)
	if err := os.WriteFile(prof, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if f := agentSeccompFinding(t, dir, files); f == nil || f.Unknown || !strings.Contains(f.Detail, "ptrace") {
		t.Errorf("a profile allowing ptrace: %+v, want seccomp-profile-weak naming ptrace", f)
	}
	if err := os.Remove(prof); err != nil {
		t.Fatal(err)
	}
	if f := agentSeccompFinding(t, dir, files); f == nil || !f.Unknown {
		t.Errorf("no profile file: %+v, want an unknown seccomp-profile-weak", f)
	}

	spo := renderWith(t, func(o *kube.Options) { o.Profiles = kube.ProfilesSPO })
	for _, o := range spo.Objects {
		if x, ok := o.(*kube.SeccompProfile); ok {
			x.Spec.Syscalls = append(x.Spec.Syscalls, kube.SeccompSyscall{Names: []string{"ptrace"}, Action: "SCMP_ACT_ALLOW"})
		}
	}
	if err := spo.WriteManifest(); err != nil {
		t.Fatal(err)
	}
	if f := agentSeccompFinding(t, writeOutput(t, spo), spo); f == nil || f.Unknown || !strings.Contains(f.Detail, "ptrace") {
		t.Errorf("a SeccompProfile allowing ptrace: %+v, want seccomp-profile-weak naming ptrace", f)
	}
}

func agentSeccompFinding(t *testing.T, dir string, out *kube.Output) *audit.Finding {
	t.Helper()
	r, _ := auditOutput(t, dir, out, nil)
	for _, c := range r.Containers {
		if !strings.HasPrefix(c.Name, "Pod/"+kube.AgentName+"/") {
			continue
		}
		for _, f := range c.Findings {
			if f.Code == audit.CodeSeccompWeak {
				return &f
			}
		}
	}
	return nil
}

// A PVC workspace is declared, so the audit knows it for the workspace; an
// undeclared writable PVC stays a finding.
func TestRenderPVCWorkspace(t *testing.T) {
	for name, edit := range map[string]func(*kube.Options){
		"claim": func(o *kube.Options) { o.WorkspaceClaim = "team-workspace" },
		"size":  func(o *kube.Options) { o.WorkspaceSize = "10Gi" },
	} {
		t.Run(name, func(t *testing.T) {
			out := renderWith(t, edit)
			pod := agentPod(t, out)
			var claim string
			for _, v := range pod.Spec.Volumes {
				if v.Name == "workspace" && v.PersistentVolumeClaim != nil {
					claim = v.PersistentVolumeClaim.ClaimName
				}
			}
			pvcs := 0
			for _, o := range out.Objects {
				if _, ok := o.(*corev1.PersistentVolumeClaim); ok {
					pvcs++
				}
			}
			if (name == "claim" && (claim != "team-workspace" || pvcs != 0)) || (name == "size" && (claim != kube.WorkspaceClaimName || pvcs != 1)) {
				t.Fatalf("workspace claim %q, %d PVCs rendered", claim, pvcs)
			}
			auditsClean(t, out)
			delete(pod.Annotations, "io.agentbox.workspace")
			if err := out.WriteManifest(); err != nil {
				t.Fatal(err)
			}
			r, _ := auditOutput(t, writeOutput(t, out), out, nil)
			if fs := r.Unaccepted(); len(fs) != 1 || fs[0].Code != audit.CodeExtraWritable {
				t.Errorf("an undeclared PVC workspace: %+v, want extra-writable-mount", fs)
			}
		})
	}
}

func TestRenderRefusesProfileAndWorkspaceInput(t *testing.T) {
	for name, tt := range map[string]struct {
		edit  func(*kube.Options)
		field string
	}{
		"unknown mode":         {func(o *kube.Options) { o.Profiles = "apparmor" }, "--profiles"},
		"files, no installer":  {func(o *kube.Options) { o.Profiles = kube.ProfilesFiles }, "--installer-image"},
		"installer, not files": {func(o *kube.Options) { o.InstallerImage = "x" }, "--installer-image"},
		"bad arch":             {func(o *kube.Options) { o.Profiles, o.Arch = kube.ProfilesSPO, "riscv64" }, "--arch"},
		"claim and size":       {func(o *kube.Options) { o.WorkspaceClaim, o.WorkspaceSize = "a", "1Gi" }, "--workspace-claim"},
		"bad claim":            {func(o *kube.Options) { o.WorkspaceClaim = "Team_Workspace" }, "--workspace-claim"},
		"bad size":             {func(o *kube.Options) { o.WorkspaceSize = "-1Gi" }, "--workspace-size"},
	} {
		t.Run(name, func(t *testing.T) {
			o := testOptions()
			tt.edit(&o)
			_, err := kube.Render(testPlan(), o)
			var ie *kube.InputError
			if !errors.As(err, &ie) || ie.Field != tt.field {
				t.Fatalf("err = %v, want an InputError for %s", err, tt.field)
			}
		})
	}
}

// The seccomp init container's script, run by /bin/sh with its two
// directories moved into a temporary one: it installs every profile byte
// for byte and fails (set -e) when one is missing, so a node without the
// profile never shows the installer as done.
func TestInstallerScriptCopiesTheProfiles(t *testing.T) {
	out := renderWith(t, func(o *kube.Options) { o.Profiles, o.InstallerImage = kube.ProfilesFiles, "example.org/installer:1" })
	var script string
	for _, o := range out.Objects {
		if ds, ok := o.(*appsv1.DaemonSet); ok {
			c := ds.Spec.Template.Spec.InitContainers[0]
			if c.Name != "seccomp" || len(c.Command) != 3 || c.Command[0] != "/bin/sh" {
				t.Fatalf("seccomp init container %+v", c)
			}
			script = c.Command[2]
		}
	}
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "profiles"), filepath.Join(dir, "host-seccomp")
	for _, d := range []string{src, dst} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	moved := strings.NewReplacer("/profiles/", src+"/", "/host-seccomp/", dst+"/").Replace(script)
	if err := exec.Command("/bin/sh", "-c", moved).Run(); err == nil {
		t.Fatal("the script succeeds with no profile to copy")
	}
	for name, b := range out.Files {
		if d, f := filepath.Split(name); d == "seccomp/agentbox/" {
			if err := os.WriteFile(filepath.Join(src, f), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if b, err := exec.Command("/bin/sh", "-c", moved).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	ents, _ := os.ReadDir(dst)
	if len(ents) != 2 {
		t.Fatalf("%d files installed, want the two architectures' profiles alone", len(ents))
	}
	for _, e := range ents {
		got, _ := os.ReadFile(filepath.Join(dst, e.Name()))
		if !bytes.Equal(got, out.Files["seccomp/agentbox/"+e.Name()]) {
			t.Errorf("%s differs from the rendered profile", e.Name())
		}
	}
}

// With agent-sandbox, --workspace-size is the Sandbox's volume claim
// template: the controller creates workspace-SANDBOX and mounts it as the
// pod's workspace volume, which the pod template names already.
func TestRenderSandboxWorkspaceClaimTemplate(t *testing.T) {
	out := renderWith(t, func(o *kube.Options) { o.Format, o.WorkspaceSize = kube.FormatAgentSandbox, "5Gi" })
	n := 0
	for _, o := range out.Objects {
		var claims []kube.SandboxClaimTemplate
		var spec corev1.PodSpec
		switch x := o.(type) {
		case *corev1.PersistentVolumeClaim:
			t.Errorf("a PersistentVolumeClaim %s is rendered beside the claim templates", x.Name)
			continue
		case *kube.SandboxTemplate:
			claims, spec = x.Spec.VolumeClaimTemplates, x.Spec.PodTemplate.Spec
		case *kube.Sandbox:
			claims, spec = x.Spec.VolumeClaimTemplates, x.Spec.PodTemplate.Spec
		default:
			continue
		}
		n++
		if len(claims) != 1 || claims[0].Metadata.Name != "workspace" || claims[0].Spec.Resources.Requests.Storage().String() != "5Gi" {
			t.Errorf("%T claims %+v, want the 5Gi workspace", o, claims)
		}
		found := false
		for _, v := range spec.Volumes {
			found = found || (v.Name == "workspace" && v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == "workspace-"+kube.AgentName)
		}
		if !found {
			t.Errorf("%T pod volumes %+v, want workspace from workspace-%s", o, spec.Volumes, kube.AgentName)
		}
	}
	if n != 2 {
		t.Fatalf("%d agent-sandbox objects", n)
	}
	auditsClean(t, out)
}
