package kube_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	psaapi "k8s.io/pod-security-admission/api"
	psa "k8s.io/pod-security-admission/policy"
	"sigs.k8s.io/yaml"

	"github.com/agentbox/agentbox/audit"
	"github.com/agentbox/agentbox/audit/manifest"
	"github.com/agentbox/agentbox/kube"
	"github.com/agentbox/agentbox/netpolicy"
	"github.com/agentbox/agentbox/policy"
)

const token = "agentbox-gw-0123456789abcdefghijklmnop"

// testPlan is a plan as policy.Resolve makes it for an engine-run sandbox
// (compose.PlanHost): the tmpfs mounts, the workspace, system binds the
// pod has no use for.
func testPlan() *policy.Plan {
	return &policy.Plan{
		Command:   []string{"/bin/sh"},
		Env:       []string{"PATH=" + policy.SystemPath, "HOME=/home/agent", "USER=agent", "TERM=xterm-256color", "LANG=C.UTF-8"},
		Cwd:       "/work/project",
		Workspace: "/work/project",
		Identity:  policy.Identity{UID: 1000, GID: 1000, User: "agent", Home: "/home/agent"},
		Hostname:  policy.Hostname,
		Mounts: []policy.Mount{
			{Kind: policy.KindEtc, Source: "/etc/ssl/certs", Destination: "/etc/ssl/certs", ReadOnly: true},
			{Kind: policy.KindTmpfs, Destination: "/home/agent", Options: []string{"mode=0700", "size=64m"}},
			{Kind: policy.KindTmpfs, Destination: "/tmp", Options: []string{"mode=1777"}},
			{Kind: policy.KindSystem, Source: "/usr", Destination: "/usr", ReadOnly: true},
			{Kind: policy.KindWorkspace, Source: "/work/project", Destination: "/work/project"},
		},
		Limits:    &policy.ResolvedLimits{MemoryBytes: 4 << 30, Pids: 512, CPUWeight: 100},
		Seccomp:   "agentbox",
		Network:   policy.Network{Allow: []string{"proxy.golang.org:443", "git.example.org:8443"}},
		Residuals: []policy.Residual{{Code: "lsm-unavailable", Reason: "no LSM on this host"}},
	}
}

func testOptions() kube.Options {
	return kube.Options{Image: "example.org/agent:1", Command: []string{"codex"}, GatewayImage: "example.org/agentbox-gateway:1", GatewayIP: "10.96.0.86", Token: token}
}

func render(t *testing.T) *kube.Output {
	t.Helper()
	out, err := kube.Render(testPlan(), testOptions())
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// renderings are the test plan rendered in every form agentbox kube
// writes, by name.
func renderings(t *testing.T) map[string]*kube.Output {
	t.Helper()
	out := map[string]*kube.Output{}
	for name, edit := range map[string]func(*kube.Options){
		"manifests":     func(*kube.Options) {},
		"job":           func(o *kube.Options) { o.Job = true },
		"agent-sandbox": func(o *kube.Options) { o.Format = kube.FormatAgentSandbox },
		"files": func(o *kube.Options) {
			o.Profiles, o.InstallerImage, o.WorkspaceSize = kube.ProfilesFiles, "example.org/installer:1", "10Gi"
		},
		"spo": func(o *kube.Options) {
			o.Profiles, o.Arch, o.WorkspaceClaim = kube.ProfilesSPO, "arm64", "team-workspace"
		},
		"agent-sandbox-spo": func(o *kube.Options) {
			o.Format, o.Profiles, o.WorkspaceSize = kube.FormatAgentSandbox, kube.ProfilesSPO, "5Gi"
		},
		"job-files": func(o *kube.Options) {
			o.Job, o.Profiles, o.InstallerImage = true, kube.ProfilesFiles, "example.org/installer:1"
		},
	} {
		o := testOptions()
		edit(&o)
		r, err := kube.Render(testPlan(), o)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = r
	}
	return out
}

// agentObjects is how many objects hold the agent's pod: a SandboxTemplate
// and a Sandbox, or one Pod or Job.
func agentObjects(out *kube.Output) int {
	n := 0
	for _, o := range out.Objects {
		switch o.(type) {
		case *corev1.Pod, *batchv1.Job, *kube.SandboxTemplate, *kube.Sandbox:
			n++
		}
	}
	return n
}

// typed returns an empty object of the kind a document declares.
func typed(t *testing.T, doc []byte) any {
	t.Helper()
	var head metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &head); err != nil {
		t.Fatal(err)
	}
	switch head.Kind {
	case "Namespace":
		return &corev1.Namespace{}
	case "ServiceAccount":
		return &corev1.ServiceAccount{}
	case "ConfigMap":
		return &corev1.ConfigMap{}
	case "Service":
		return &corev1.Service{}
	case "Pod":
		return &corev1.Pod{}
	case "Job":
		return &batchv1.Job{}
	case "SandboxTemplate":
		return &kube.SandboxTemplate{}
	case "Sandbox":
		return &kube.Sandbox{}
	case "Deployment":
		return &appsv1.Deployment{}
	case "DaemonSet":
		return &appsv1.DaemonSet{}
	case "PersistentVolumeClaim":
		return &corev1.PersistentVolumeClaim{}
	case "SeccompProfile":
		return &kube.SeccompProfile{}
	case "NetworkPolicy":
		return &networkingv1.NetworkPolicy{}
	}
	t.Fatalf("rendered an object of unexpected kind %q", head.Kind)
	return nil
}

func docs(manifest []byte) [][]byte {
	var out [][]byte
	for _, d := range bytes.Split(manifest, []byte("\n---\n")) {
		if len(bytes.TrimSpace(d)) > 0 {
			out = append(out, d)
		}
	}
	return out
}

// Every rendered object decodes strictly into its k8s.io/api type (an
// unknown or duplicated field is an error) and encodes back to the same
// bytes.
func TestRenderStrictRoundTrip(t *testing.T) {
	for name, out := range renderings(t) {
		t.Run(name, func(t *testing.T) { roundTrip(t, out) })
	}
}

func roundTrip(t *testing.T, out *kube.Output) {
	ds := docs(out.Manifest)
	if len(ds) != len(out.Objects) || agentObjects(out) == 0 {
		t.Fatalf("%d documents for %d objects (%d of the agent)", len(ds), len(out.Objects), agentObjects(out))
	}
	for i, d := range ds {
		body := d
		if i == 0 { // the leading comment
			_, body, _ = bytes.Cut(d, []byte("\n"))
		}
		obj := typed(t, body)
		if err := yaml.UnmarshalStrict(body, obj); err != nil {
			t.Fatalf("document %d does not decode strictly: %v\n%s", i, err, body)
		}
		again, err := yaml.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(bytes.TrimSpace(again), bytes.TrimSpace(body)) {
			t.Errorf("document %d changes in a round trip:\n%s\nvs\n%s", i, body, again)
		}
	}
}

// The Pod Security evaluator at restricted, latest, admits every pod each
// rendering holds.
func TestRenderPassesPodSecurityRestricted(t *testing.T) {
	for name, out := range renderings(t) {
		t.Run(name, func(t *testing.T) { podSecurity(t, out) })
	}
}

func podSecurity(t *testing.T, out *kube.Output) {
	e, err := psa.NewEvaluator(psa.DefaultChecks(), nil)
	if err != nil {
		t.Fatal(err)
	}
	lv := psaapi.LevelVersion{Level: psaapi.LevelRestricted, Version: psaapi.LatestVersion()}
	pods := 0
	for _, o := range out.Objects {
		var meta *metav1.ObjectMeta
		var spec *corev1.PodSpec
		switch x := o.(type) {
		case *appsv1.DaemonSet:
			// The profile installer: restricted forbids it (hostPath,
			// root, CAP_MAC_ADMIN), which is why it has a namespace of its
			// own, which enforces privileged.
			if x.Name != kube.InstallerName || x.Namespace != kube.SystemNamespace || out.Installer == nil {
				t.Fatalf("unexpected DaemonSet %s/%s", x.Namespace, x.Name)
			}
			if agg := psa.AggregateCheckResults(e.EvaluatePod(lv, &x.Spec.Template.ObjectMeta, &x.Spec.Template.Spec)); agg.Allowed {
				t.Errorf("the installer is admitted at restricted: it needs no namespace of its own")
			}
			continue
		case *corev1.Pod:
			meta, spec = &x.ObjectMeta, &x.Spec
		case *appsv1.Deployment:
			meta, spec = &x.Spec.Template.ObjectMeta, &x.Spec.Template.Spec
		case *batchv1.Job:
			meta, spec = &x.Spec.Template.ObjectMeta, &x.Spec.Template.Spec
		case *kube.SandboxTemplate:
			meta, spec = &metav1.ObjectMeta{Name: x.Name, Labels: x.Spec.PodTemplate.Metadata.Labels}, &x.Spec.PodTemplate.Spec
		case *kube.Sandbox:
			meta, spec = &metav1.ObjectMeta{Name: x.Name, Labels: x.Spec.PodTemplate.Metadata.Labels}, &x.Spec.PodTemplate.Spec
		default:
			continue
		}
		pods++
		if agg := psa.AggregateCheckResults(e.EvaluatePod(lv, meta, spec)); !agg.Allowed {
			t.Errorf("%s is forbidden at restricted: %s", meta.Name, agg.ForbiddenDetail())
		}
	}
	if pods != 1+agentObjects(out) {
		t.Fatalf("evaluated %d pods, want the agent's and the gateway", pods)
	}
}

// agentbox's own audit of the rendering finds nothing but the residual the
// rendering declares, and the namespace enforces restricted.
func TestRenderAuditsClean(t *testing.T) {
	for name, out := range renderings(t) {
		t.Run(name, func(t *testing.T) { auditsClean(t, out) })
	}
}

// writeOutput writes a rendering as agentbox kube does: the manifest and
// its files.
func writeOutput(t *testing.T, out *kube.Output) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string][]byte{kube.ManifestFile: out.Manifest}
	for k, v := range out.Files {
		files[k] = v
	}
	for name, b := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// auditOutput audits a written rendering as the launcher does: the
// installer's containers with its acceptances, the others without them.
func auditOutput(t *testing.T, dir string, out *kube.Output, extra []policy.Acceptance) (agent, installer audit.Report) {
	t.Helper()
	ko := manifest.KubeOptions{}
	if out.SeccompRoot != "" {
		ko.SeccompRoot = filepath.Join(dir, out.SeccompRoot)
	}
	cs, err := manifest.LoadKube([]string{dir}, ko)
	if err != nil {
		t.Fatal(err)
	}
	var own, inst []audit.Container
	for _, c := range cs {
		if out.Installer != nil && strings.HasPrefix(c.Name, out.Installer.Workload+"/") {
			inst = append(inst, c)
		} else {
			own = append(own, c)
		}
	}
	accept := append(append([]policy.Acceptance(nil), out.Accept...), extra...)
	agent = audit.Audit(own, audit.Options{Accept: accept})
	if out.Installer != nil {
		installer = audit.Audit(inst, audit.Options{Accept: append(accept, out.Installer.Accept...)})
	}
	return agent, installer
}

func auditsClean(t *testing.T, out *kube.Output) {
	dir := writeOutput(t, out)
	r, ir := auditOutput(t, dir, out, nil)
	for _, rep := range []audit.Report{r, ir} {
		if fs := rep.Unaccepted(); len(fs) != 0 {
			var buf bytes.Buffer
			_ = audit.WriteText(&buf, rep, false)
			t.Fatalf("the rendering has %d findings:\n%s", len(fs), buf.String())
		}
	}
	if n := len(r.Accepted()); n != 1 {
		t.Errorf("%d accepted findings, want the gateway's egress alone", n)
	}
	// Each of the installer's acceptances is used: none is broader than
	// what the installer has.
	if out.Installer != nil {
		used := map[string]bool{}
		for _, f := range ir.Accepted() {
			used[f.Code+" "+f.AcceptedReason] = true
		}
		for _, a := range out.Installer.Accept {
			if !used[a.Code+" "+a.Reason] {
				t.Errorf("the installer's acceptance of %s %q covers no finding", a.Code, a.Subject)
			}
		}
	}
	// With agentbox's own profile the agent's seccomp is compared with
	// agentbox's and found as strong; otherwise it is the runtime's.
	for _, c := range r.Containers {
		if !strings.Contains(c.Name, kube.AgentName) {
			continue
		}
		s := c.Model.Seccomp
		switch {
		case out.SeccompRoot != "" || hasKind(out, "SeccompProfile"):
			if s.Mode != "custom" || !s.WeakKnown || len(s.Weak) > 0 || s.Error != "" {
				t.Errorf("%s: seccomp %+v, want agentbox's profile, compared and as strong", c.Name, s)
			}
		case s.Mode != "default":
			t.Errorf("%s: seccomp %+v, want RuntimeDefault", c.Name, s)
		}
	}
	cs, err := manifest.LoadKube([]string{filepath.Join(dir, kube.ManifestFile)}, manifest.KubeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ns := out.Objects[0].(*corev1.Namespace)
	if ns.Labels["pod-security.kubernetes.io/enforce"] != "restricted" {
		t.Errorf("namespace labels %v, want enforce: restricted", ns.Labels)
	}
	// Without the declared acceptance, the gateway's open egress fails.
	if out.Installer == nil && out.SeccompRoot == "" {
		if fs := audit.Audit(cs, audit.Options{}).Unaccepted(); len(fs) != 1 || fs[0].Code != audit.CodeNetworkPolicy {
			t.Errorf("without acceptances: %+v, want the gateway's network-policy finding", fs)
		}
	}
}

func hasKind(out *kube.Output, kind string) bool {
	for _, o := range out.Objects {
		if o.GetObjectKind().GroupVersionKind().Kind == kind {
			return true
		}
	}
	return false
}

// The agent reaches the gateway at the Service's fixed address from its
// environment; the real keys are mounted into the gateway alone.
func TestRenderWiring(t *testing.T) {
	out := render(t)
	var pod *corev1.Pod
	var svc *corev1.Service
	var dep *appsv1.Deployment
	for _, o := range out.Objects {
		switch x := o.(type) {
		case *corev1.Pod:
			pod = x
		case *corev1.Service:
			svc = x
		case *appsv1.Deployment:
			dep = x
		}
	}
	if svc.Spec.ClusterIP != "10.96.0.86" {
		t.Errorf("service clusterIP %q", svc.Spec.ClusterIP)
	}
	env := map[string]string{}
	for _, e := range pod.Spec.Containers[0].Env {
		env[e.Name] = e.Value
	}
	if !strings.HasPrefix(env["AGENTBOX_GATEWAY_URL"], "http://10.96.0.86:8080") || env[kube.KeyEnv] != token {
		t.Errorf("agent env %v: want the gateway's address and the gateway key", env)
	}
	for _, v := range pod.Spec.Volumes {
		if v.Secret != nil || v.HostPath != nil {
			t.Errorf("agent volume %+v: the agent mounts no secret and no host path", v)
		}
	}
	secret := false
	for _, v := range dep.Spec.Template.Spec.Volumes {
		secret = secret || (v.Secret != nil && v.Secret.SecretName == kube.KeySecret)
	}
	if !secret || !slices.Equal(out.Routes, netpolicy.BuiltinRoutes()) || len(out.Notes) == 0 {
		t.Errorf("gateway volumes %+v, routes %v, notes %v: want the key Secret and a note to create it", dep.Spec.Template.Spec.Volumes, out.Routes, out.Notes)
	}
}

func TestRenderRefuses(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(p *policy.Plan, o *kube.Options)
		field string
	}{
		{"no gateway ip", func(p *policy.Plan, o *kube.Options) { o.GatewayIP = "" }, "--gateway-ip"},
		{"bad gateway ip", func(p *policy.Plan, o *kube.Options) { o.GatewayIP = "gateway" }, "--gateway-ip"},
		{"no image", func(p *policy.Plan, o *kube.Options) { o.Image = "" }, "--image"},
		{"no gateway image", func(p *policy.Plan, o *kube.Options) { o.GatewayImage = "" }, "--gateway-image"},
		{"host bind", func(p *policy.Plan, o *kube.Options) {
			p.Mounts = append(p.Mounts, policy.Mount{Kind: policy.KindExtra, Source: "/data", Destination: "/data"})
		}, "binds"},
		{"no memory limit", func(p *policy.Plan, o *kube.Options) { p.Limits = nil }, "limits"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, o := testPlan(), testOptions()
			tt.edit(p, &o)
			_, err := kube.Render(p, o)
			var ie *kube.InputError
			if !errors.As(err, &ie) || ie.Field != tt.field || ie.Fix == "" && ie.Field != "limits" {
				t.Fatalf("err = %v, want an InputError for %s with a fix", err, tt.field)
			}
		})
	}
}
