package kube_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
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
	if len(ds) != len(out.Objects) || len(ds) != 8+agentObjects(out)-1 {
		t.Fatalf("%d documents for %d objects, want 7 and the agent's", len(ds), len(out.Objects))
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

func auditsClean(t *testing.T, out *kube.Output) {
	p := filepath.Join(t.TempDir(), kube.ManifestFile)
	if err := os.WriteFile(p, out.Manifest, 0o600); err != nil {
		t.Fatal(err)
	}
	cs, err := manifest.LoadKube([]string{p}, manifest.KubeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := audit.Audit(cs, audit.Options{Accept: out.Accept})
	if fs := r.Unaccepted(); len(fs) != 0 {
		var buf bytes.Buffer
		_ = audit.WriteText(&buf, r, false)
		t.Fatalf("the rendering has %d findings:\n%s", len(fs), buf.String())
	}
	if n := len(r.Accepted()); n != 1 {
		t.Errorf("%d accepted findings, want the gateway's egress alone", n)
	}
	ns := out.Objects[0].(*corev1.Namespace)
	if ns.Labels["pod-security.kubernetes.io/enforce"] != "restricted" {
		t.Errorf("namespace labels %v, want enforce: restricted", ns.Labels)
	}
	// Without the declared acceptance, the gateway's open egress fails.
	if fs := audit.Audit(cs, audit.Options{}).Unaccepted(); len(fs) != 1 || fs[0].Code != audit.CodeNetworkPolicy {
		t.Errorf("without acceptances: %+v, want the gateway's network-policy finding", fs)
	}
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
	if !secret || len(out.Routes) != 2 || len(out.Notes) == 0 {
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
