package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"

	. "github.com/agentbox/agentbox/audit"
)

const kubeHardened = "testdata/kube/hardened.yaml"

// hardenedPod reads the pod of the hardened manifest and the rest of the
// file (its NetworkPolicy).
func hardenedPod(t *testing.T) (corev1.Pod, string) {
	t.Helper()
	b, err := os.ReadFile(kubeHardened)
	if err != nil {
		t.Fatal(err)
	}
	podDoc, rest, _ := strings.Cut(string(b), "\n---\n")
	var p corev1.Pod
	if err := yaml.UnmarshalStrict([]byte(podDoc), &p); err != nil {
		t.Fatal(err)
	}
	return p, rest
}

// writeManifest writes docs as one multi-document YAML file.
func writeManifest(t *testing.T, docs ...string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "m.yaml")
	if err := os.WriteFile(p, []byte(strings.Join(docs, "\n---\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func podYAML(t *testing.T, p corev1.Pod) string {
	t.Helper()
	p.APIVersion, p.Kind = "v1", "Pod"
	b, err := yaml.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func auditKube(t *testing.T, o Options, paths ...string) Report {
	t.Helper()
	cs, err := Load(t.Context(), paths, Loaders(LoadOptions{}, ComposeOptions{}, KubeOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	return Audit(cs, o)
}

func failingCodes(r Report) []string {
	var out []string
	for _, f := range r.Unaccepted() {
		out = append(out, f.Code)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func TestKubeHardenedAuditsClean(t *testing.T) {
	r := auditKube(t, Options{}, kubeHardened)
	if len(r.Containers) != 1 {
		t.Fatalf("got %d containers, want 1", len(r.Containers))
	}
	if got := failingCodes(r); len(got) != 0 {
		var buf bytes.Buffer
		_ = WriteText(&buf, r, false)
		t.Fatalf("hardened manifest has findings %v:\n%s", got, buf.String())
	}
	ps := r.Containers[0].Model.PodSecurity
	if ps == nil || !ps.Allowed {
		t.Fatalf("pod security = %+v, want allowed at restricted", ps)
	}
}

func boolp(b bool) *bool    { return &b }
func int64p(i int64) *int64 { return &i }

func TestKubeFaults(t *testing.T) {
	ctr := func(p *corev1.Pod) *corev1.Container { return &p.Spec.Containers[0] }
	hostPath := func(path string) func(p *corev1.Pod) {
		return func(p *corev1.Pod) {
			p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: "h", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: path}}})
			ctr(p).VolumeMounts = append(ctr(p).VolumeMounts, corev1.VolumeMount{Name: "h", MountPath: "/host", ReadOnly: true})
		}
	}
	tests := []struct {
		name   string
		mutate func(p *corev1.Pod)
		code   string
		pss    bool // the Pod Security evaluator forbids it too
	}{
		{"docker socket", hostPath("/var/run/docker.sock"), CodeContainerSocket, true},
		{"host root", hostPath("/"), CodeHostRoot, true},
		{"home", hostPath("/home/ana/.ssh"), CodeHomeDirectory, true},
		{"system dir", hostPath("/etc"), CodeSystemDirectory, true},
		{"literal secret", func(p *corev1.Pod) {
			ctr(p).Env = append(ctr(p).Env, corev1.EnvVar{Name: "OPENAI_API_KEY", Value: "sk-proj-abcdefghijklmnopqrstuvwxyz"})
		}, CodeSecretInEnv, false},
		{"secretKeyRef", func(p *corev1.Pod) {
			ctr(p).Env = append(ctr(p).Env, corev1.EnvVar{Name: "HARMLESS", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "k"}, Key: "v"}}})
		}, CodeSecretInEnv, false},
		{"credential from a ConfigMap", func(p *corev1.Pod) {
			ctr(p).Env = append(ctr(p).Env, corev1.EnvVar{Name: "GITHUB_TOKEN", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "c"}, Key: "t"}}})
		}, CodeSecretInEnv, false},
		{"envFrom secret", func(p *corev1.Pod) {
			ctr(p).EnvFrom = append(ctr(p).EnvFrom, corev1.EnvFromSource{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "keys"}}})
		}, CodeSecretInEnv, false},
		{"hostNetwork", func(p *corev1.Pod) { p.Spec.HostNetwork = true }, CodeHostNetwork, true},
		{"hostPID", func(p *corev1.Pod) { p.Spec.HostPID = true }, CodeHostPID, true},
		{"hostIPC", func(p *corev1.Pod) { p.Spec.HostIPC = true }, CodeHostIPC, true},
		{"privileged", func(p *corev1.Pod) { ctr(p).SecurityContext.Privileged = boolp(true) }, CodePrivileged, true},
		{"cap add", func(p *corev1.Pod) {
			ctr(p).SecurityContext.Capabilities.Add = []corev1.Capability{"SYS_ADMIN"}
		}, CodeCapsAdded, true},
		{"caps kept", func(p *corev1.Pod) { ctr(p).SecurityContext.Capabilities = nil }, CodeCapsNotDropped, true},
		{"privilege escalation unset", func(p *corev1.Pod) { ctr(p).SecurityContext.AllowPrivilegeEscalation = nil }, CodeNewPrivileges, true},
		{"root", func(p *corev1.Pod) {
			p.Spec.HostUsers = nil
			p.Spec.SecurityContext.RunAsUser, p.Spec.SecurityContext.RunAsNonRoot = int64p(0), nil
		}, CodeRunsAsRoot, true},
		{"writable root", func(p *corev1.Pod) { ctr(p).SecurityContext.ReadOnlyRootFilesystem = nil }, CodeWritableRoot, false},
		{"seccomp unconfined", func(p *corev1.Pod) {
			p.Spec.SecurityContext.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined}
		}, CodeSeccompUnconfined, true},
		{"seccomp unset", func(p *corev1.Pod) { p.Spec.SecurityContext.SeccompProfile = nil }, CodeSeccompUnconfined, true},
		{"no limits", func(p *corev1.Pod) { ctr(p).Resources = corev1.ResourceRequirements{} }, CodeNoLimits, false},
		{"no cpu limit", func(p *corev1.Pod) {
			ctr(p).Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}
		}, CodeNoLimits, false},
		{"token mounted", func(p *corev1.Pod) { p.Spec.AutomountServiceAccountToken = boolp(true) }, CodeServiceAccountToken, false},
		{"token unset", func(p *corev1.Pod) { p.Spec.AutomountServiceAccountToken = nil }, CodeServiceAccountToken, false},
		{"policy does not select", func(p *corev1.Pod) { p.Labels = map[string]string{"app": "other"} }, CodeNetworkPolicy, false},
		{"proc unmasked", func(p *corev1.Pod) {
			u := corev1.UnmaskedProcMount
			ctr(p).SecurityContext.ProcMount = &u
		}, CodeProcMasks, true},
		{"apparmor unconfined", func(p *corev1.Pod) {
			p.Spec.SecurityContext.AppArmorProfile = &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeUnconfined}
		}, CodeAppArmor, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, policy := hardenedPod(t)
			tt.mutate(&p)
			r := auditKube(t, Options{}, writeManifest(t, podYAML(t, p), policy))
			got := failingCodes(r)
			if !slices.Contains(got, tt.code) {
				t.Fatalf("findings %v, want %s", got, tt.code)
			}
			for _, f := range r.Unaccepted() {
				if f.Code == tt.code && (f.Line == 0 || len(f.Also) == 0) {
					t.Errorf("finding %s: line %d, also %v; want both", f.Code, f.Line, f.Also)
				}
			}
			if ps := r.Containers[0].Model.PodSecurity; ps.Allowed == tt.pss {
				t.Errorf("pod security allowed=%v, want %v: %s", ps.Allowed, !tt.pss, ps)
			}
		})
	}
}

func TestKubeAutoApprove(t *testing.T) {
	p, policy := hardenedPod(t)
	p.Spec.Containers[0].Command = []string{"codex", "--dangerously-bypass-approvals-and-sandbox"}
	r := auditKube(t, Options{}, writeManifest(t, podYAML(t, p), policy))
	fs := r.Containers[0].Findings
	if !slices.ContainsFunc(fs, func(f Finding) bool { return f.Code == CodeAutoApprove }) {
		t.Fatalf("findings %+v, want %s", fs, CodeAutoApprove)
	}
	if pm := r.Containers[0].PermissionMode; pm.Agent != "codex" {
		t.Errorf("permission mode %+v, want codex's", pm)
	}
}

func TestKubeNetworkPolicyVerdicts(t *testing.T) {
	p, policy := hardenedPod(t)
	open := strings.Replace(policy, "  - to:\n", "  - to:\n    - ipBlock:\n        cidr: 0.0.0.0/0\n", 1)
	deny := "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: deny, namespace: agents}\nspec:\n  podSelector: {}\n  policyTypes: [Egress]\n"
	tests := []struct {
		name     string
		docs     []string
		ko       KubeOptions
		internal Tri
	}{
		{"gateway only", []string{policy}, KubeOptions{}, Yes},
		{"default deny", []string{deny}, KubeOptions{}, Yes},
		{"internet open", []string{open}, KubeOptions{}, No},
		{"no policies in input", nil, KubeOptions{}, Unknown},
		{"no policies, elsewhere", nil, KubeOptions{PoliciesElsewhere: true}, Yes},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs, err := LoadKube([]string{writeManifest(t, append([]string{podYAML(t, p)}, tt.docs...)...)}, tt.ko)
			if err != nil {
				t.Fatal(err)
			}
			n := cs[0].Networks[0]
			if n.Internal != tt.internal {
				t.Fatalf("internal = %s (%s), want %s", n.Internal, n.Why, tt.internal)
			}
			fs := Audit(cs, Options{}).Containers[0].Findings
			has := slices.ContainsFunc(fs, func(f Finding) bool {
				return f.Code == CodeNetworkPolicy && f.Unknown == (tt.internal == Unknown)
			})
			if has != (tt.internal != Yes) {
				t.Errorf("network-policy finding present=%v, want %v: %+v", has, tt.internal != Yes, fs)
			}
		})
	}
}

func TestKubeWorkloadKinds(t *testing.T) {
	p, _ := hardenedPod(t)
	tmpl, err := yaml.Marshal(map[string]any{"metadata": map[string]any{"labels": p.Labels}, "spec": p.Spec})
	if err != nil {
		t.Fatal(err)
	}
	indent := func(s string, n int) string {
		pad := strings.Repeat(" ", n)
		return pad + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n"+pad)
	}
	sel := "  selector:\n    matchLabels: {app.kubernetes.io/component: agentbox-agent}\n"
	kinds := map[string]string{
		"Deployment":      "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: w}\nspec:\n" + sel + "  template:\n" + indent(string(tmpl), 4),
		"StatefulSet":     "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: w}\nspec:\n" + sel + "  template:\n" + indent(string(tmpl), 4),
		"DaemonSet":       "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: w}\nspec:\n" + sel + "  template:\n" + indent(string(tmpl), 4),
		"ReplicaSet":      "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: w}\nspec:\n" + sel + "  template:\n" + indent(string(tmpl), 4),
		"Job":             "apiVersion: batch/v1\nkind: Job\nmetadata: {name: w}\nspec:\n  template:\n" + indent(string(tmpl), 4),
		"CronJob":         "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: w}\nspec:\n  schedule: '@daily'\n  jobTemplate:\n    spec:\n      template:\n" + indent(string(tmpl), 8),
		"Sandbox":         "apiVersion: agents.x-k8s.io/v1beta1\nkind: Sandbox\nmetadata: {name: w}\nspec:\n  podTemplate:\n" + indent(string(tmpl), 4),
		"SandboxTemplate": "apiVersion: extensions.agents.x-k8s.io/v1beta1\nkind: SandboxTemplate\nmetadata: {name: w}\nspec:\n  podTemplate:\n" + indent(string(tmpl), 4),
		// A managed policy whose only egress is the gateway keeps the pod in.
		"SandboxTemplate gateway-only": "apiVersion: extensions.agents.x-k8s.io/v1beta1\nkind: SandboxTemplate\nmetadata: {name: w}\nspec:\n" +
			"  networkPolicy:\n    egress:\n    - to:\n      - podSelector: {matchLabels: {app: gw}}\n  podTemplate:\n" + indent(string(tmpl), 4),
	}
	for name, doc := range kinds {
		kind, _, _ := strings.Cut(name, " ")
		t.Run(name, func(t *testing.T) {
			// A SandboxTemplate brings its own managed policy: nothing is vouched for it.
			cs, err := LoadKube([]string{writeManifest(t, doc)}, KubeOptions{PoliciesElsewhere: kind != "SandboxTemplate"})
			if err != nil {
				t.Fatal(err)
			}
			if len(cs) != 1 || cs[0].Name != kind+"/w/agent" {
				t.Fatalf("got %d models (%v), want %s/w/agent", len(cs), cs, kind)
			}
			fs := Audit(cs, Options{}).Unaccepted()
			want := 0
			if name == "SandboxTemplate" { // the controller's default policy opens the internet
				want = 1
			}
			if len(fs) != want {
				t.Fatalf("findings %+v, want %d", fs, want)
			}
		})
	}
}

func TestKubeListAndDirectory(t *testing.T) {
	p, policy := hardenedPod(t)
	pj, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": p.ObjectMeta, "spec": p.Spec})
	var pod map[string]any
	_ = json.Unmarshal(pj, &pod)
	list, err := yaml.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": []any{pod, pod}})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	jsonList, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": []any{pod}})
	files := map[string]string{
		"a-list.yaml": string(list), "b-policy.yml": policy, "c-get.json": string(jsonList),
		"notes.txt": "not a manifest", "package.json": `{"name": "x"}`,
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	kind, _, err := Detect(dir)
	if err != nil || kind != KindKube {
		t.Fatalf("Detect(dir) = %q, %v; want kube", kind, err)
	}
	r := auditKube(t, Options{}, dir)
	if len(r.Containers) != 3 || len(r.Unaccepted()) != 0 {
		t.Fatalf("got %d containers and findings %v, want 3 clean", len(r.Containers), failingCodes(r))
	}
}

func TestKubeBadInputNamesLineAndField(t *testing.T) {
	bad := "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: a\n    image: x\n    securityContext:\n      privilegd: true\n"
	_, err := LoadKube([]string{writeManifest(t, bad)}, KubeOptions{})
	var ie *InputError
	if !errors.As(err, &ie) {
		t.Fatalf("err = %v, want an *InputError", err)
	}
	if ie.Line != 9 || !strings.Contains(err.Error(), "privilegd") || !strings.Contains(err.Error(), "remove it or fix its spelling") {
		t.Fatalf("err = %v (line %d), want line 9 naming the field and the fix", err, ie.Line)
	}
	for _, tt := range []struct {
		doc  string
		line int
		want string
	}{
		{"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: a\n    image: x\n    ports:\n    - containerPort: abc\n", 9, "containerPort: want int32"},
		{"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: a\n    image: x\n    image: y\n", 8, "already defined"},
		{"kind: Pod\nmetadata: {name: p}\n", 1, "apiVersion and kind are required"},
	} {
		_, err = LoadKube([]string{writeManifest(t, tt.doc)}, KubeOptions{})
		if !errors.As(err, &ie) || ie.Line != tt.line || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("err = %v, want line %d and %q", err, tt.line, tt.want)
		}
	}
	_, err = LoadKube([]string{writeManifest(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")}, KubeOptions{})
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "no workload") {
		t.Fatalf("err = %v, want no workload found", err)
	}
}

func TestKubeOutputs(t *testing.T) {
	p, policy := hardenedPod(t)
	p.Spec.HostNetwork = true
	r := auditKube(t, Options{}, writeManifest(t, podYAML(t, p), policy))
	var text, sarif bytes.Buffer
	if err := WriteText(&text, r, false); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"pod_security: restricted", "forbidden: host namespaces", "also: pss:hostNamespaces, kube-linter:host-network"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	if err := WriteSARIF(&sarif, r, ""); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sarif.String(), `"kubescape:C-0041"`) || !strings.Contains(sarif.String(), `"startLine"`) {
		t.Errorf("SARIF lacks the other tools' ids or a line:\n%s", sarif.String())
	}
	b, _ := json.Marshal(r)
	if !strings.Contains(string(b), `"pod_security":{"level":"restricted"`) {
		t.Errorf("JSON lacks the pod security verdict: %s", b)
	}
}

func FuzzKube(f *testing.F) {
	b, err := os.ReadFile(kubeHardened)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte("apiVersion: v1\nkind: List\nitems:\n- &a {apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: [{name: c}]}}\n- *a\n"))
	f.Add([]byte("apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: c}\nspec: {jobTemplate: {spec: {template: {spec: {containers: [{name: c, env: [{name: X, valueFrom: {secretKeyRef: {name: s, key: k}}}]}]}}}}}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(t.TempDir(), "m.yaml")
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		cs, err := LoadKube([]string{p}, KubeOptions{})
		if err != nil {
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("error %v is not an *InputError", err)
			}
			return
		}
		r := Audit(cs, Options{})
		if err := WriteText(discard{}, r, true); err != nil {
			t.Fatal(err)
		}
	})
}

// Findings point at the line of the field that causes them.
func TestKubeFindingLines(t *testing.T) {
	b, err := os.ReadFile(kubeHardened)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.NewReplacer("allowPrivilegeEscalation: false", "allowPrivilegeEscalation: true", "type: RuntimeDefault", "type: Unconfined").Replace(string(b))
	lineOf := func(s string) int {
		for i, l := range strings.Split(text, "\n") {
			if strings.Contains(l, s) {
				return i + 1
			}
		}
		t.Fatalf("%q not in the manifest", s)
		return 0
	}
	r := auditKube(t, Options{}, writeManifest(t, text))
	want := map[string]int{CodeNewPrivileges: lineOf("allowPrivilegeEscalation:"), CodeSeccompUnconfined: lineOf("seccompProfile:")}
	for _, f := range r.Unaccepted() {
		if l, ok := want[f.Code]; ok {
			if f.Line != l {
				t.Errorf("%s at line %d, want %d", f.Code, f.Line, l)
			}
			delete(want, f.Code)
		}
	}
	if len(want) > 0 {
		t.Errorf("findings missing: %v", want)
	}
}

// A Localhost seccomp profile is compared with agentbox's when the input
// has it: an operator SeccompProfile (at operator/NAME.json) or a file
// below KubeOptions.SeccompRoot. A profile allowing what agentbox denies
// is weak; one the input does not have stays unknown.
func TestKubeLocalhostSeccomp(t *testing.T) {
	agentbox, err := os.ReadFile("../../seccomp/profiles/agentbox-amd64.json")
	if err != nil {
		t.Fatal(err)
	}
	var spec map[string]any
	if err := json.Unmarshal(agentbox, &spec); err != nil {
		t.Fatal(err)
	}
	delete(spec, "defaultErrnoRet") // the operator has no such field
	for _, s := range spec["syscalls"].([]any) {
		delete(s.(map[string]any), "comment")
	}
	spo := func(name string, extra ...any) string {
		sp := map[string]any{}
		for k, v := range spec {
			sp[k] = v
		}
		sp["syscalls"] = append(append([]any(nil), spec["syscalls"].([]any)...), extra...)
		b, _ := yaml.Marshal(map[string]any{"apiVersion": "security-profiles-operator.x-k8s.io/v1beta1", "kind": "SeccompProfile", "metadata": map[string]any{"name": name}, "spec": sp})
		return string(b)
	}
	ptrace := map[string]any{"names": []string{"ptrace"}, "action": "SCMP_ACT_ALLOW"}
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "agentbox"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "agentbox", "agentbox.json"), agentbox, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("agentbox.json", filepath.Join(root, "agentbox", "link.json")); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir() // a valid profile the audit must not read
	if err := os.WriteFile(filepath.Join(outside, "agentbox.json"), agentbox, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "out")); err != nil {
		t.Fatal(err)
	}
	fifoRoot := t.TempDir() // a FIFO must not block the audit
	if err := syscall.Mkfifo(filepath.Join(fifoRoot, "fifo.json"), 0o600); err != nil {
		t.Fatal(err)
	}
	withProfile := func(lp string) string {
		p, rest := hardenedPod(t)
		p.Spec.SecurityContext.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeLocalhost, LocalhostProfile: &lp}
		return podYAML(t, p) + "\n---\n" + rest
	}
	tests := []struct {
		name    string
		docs    []string
		root    string
		unknown bool // an unknown seccomp-profile-weak; else weak when fails
		fails   bool
	}{
		{"operator profile", []string{withProfile("operator/agentbox-amd64.json"), spo("agentbox-amd64")}, "", false, false},
		{"operator profile allowing ptrace", []string{withProfile("operator/agentbox-amd64.json"), spo("agentbox-amd64", ptrace)}, "", false, true},
		{"operator profile absent", []string{withProfile("operator/agentbox-amd64.json")}, "", true, true},
		{"file in the seccomp root", []string{withProfile("agentbox/agentbox.json")}, root, false, false},
		{"file missing", []string{withProfile("agentbox/other.json")}, root, true, true},
		{"file through a symlink", []string{withProfile("agentbox/link.json")}, root, true, true},
		{"path escaping the root", []string{withProfile("../agentbox/agentbox.json")}, root, true, true},
		{"directory link out of the root", []string{withProfile("out/agentbox.json")}, root, true, true},
		{"a FIFO", []string{withProfile("fifo.json")}, fifoRoot, true, true},
		{"no root", []string{withProfile("agentbox/agentbox.json")}, "", true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs, err := LoadKube([]string{writeManifest(t, tt.docs...)}, KubeOptions{SeccompRoot: tt.root})
			if err != nil {
				t.Fatal(err)
			}
			var got *Finding
			for _, f := range Audit(cs, Options{}).Containers[0].Findings {
				if f.Code == CodeSeccompWeak {
					got = &f
				}
			}
			switch {
			case !tt.fails && got != nil:
				t.Errorf("finding %+v, want none", got)
			case tt.fails && (got == nil || got.Unknown != tt.unknown):
				t.Errorf("finding %+v, want seccomp-profile-weak (unknown %v)", got, tt.unknown)
			case tt.fails && !tt.unknown && !strings.Contains(got.Detail, "ptrace"):
				t.Errorf("finding %+v does not name ptrace", got)
			}
		})
	}
	// A directory target's seccomp/ is its seccomp root.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "pod.yaml"), []byte(withProfile("agentbox/agentbox.json")), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(root, filepath.Join(dir, "seccomp")); err != nil {
		t.Fatal(err)
	}
	if f := seccompFinding(t, dir); f == nil || !f.Unknown {
		t.Errorf("seccomp/ a symlink: %+v, want an unknown finding (a link is not followed)", f)
	}
	if err := os.Remove(filepath.Join(dir, "seccomp")); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(filepath.Join(dir, "seccomp"), os.DirFS(root)); err != nil {
		t.Fatal(err)
	}
	if f := seccompFinding(t, dir); f != nil {
		t.Errorf("seccomp/ beside the manifest: %+v, want the profile read and no finding", f)
	}
	// A misspelled SeccompProfile field is an error, as the API server's
	// strict field validation makes it.
	bad := strings.Replace(spo("agentbox-amd64"), "defaultAction:", "defaultActoin:", 1)
	if _, err := LoadKube([]string{writeManifest(t, withProfile("operator/agentbox-amd64.json"), bad)}, KubeOptions{}); err == nil || !strings.Contains(err.Error(), "defaultActoin") {
		t.Errorf("a misspelled SeccompProfile field: %v, want an error naming it", err)
	}
}

func seccompFinding(t *testing.T, path string) *Finding {
	t.Helper()
	cs, err := LoadKube([]string{path}, KubeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range Audit(cs, Options{}).Containers[0].Findings {
		if f.Code == CodeSeccompWeak {
			return &f
		}
	}
	return nil
}

// A writable PVC is extra-writable-mount unless the pod declares it its
// workspace (annotation io.agentbox.workspace naming the volume).
func TestKubeWorkspaceClaim(t *testing.T) {
	for name, tt := range map[string]struct {
		annotation string
		fails      bool
	}{
		"declared":       {"workspace", false},
		"undeclared":     {"", true},
		"another volume": {"cache", true},
	} {
		t.Run(name, func(t *testing.T) {
			p, rest := hardenedPod(t)
			p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: "workspace", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "ws"}}})
			c := &p.Spec.Containers[0]
			c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "workspace", MountPath: "/work/project"})
			if tt.annotation != "" {
				p.Annotations = map[string]string{"io.agentbox.workspace": tt.annotation}
			}
			got := failingCodes(auditKube(t, Options{}, writeManifest(t, podYAML(t, p), rest)))
			if fails := slices.Contains(got, CodeExtraWritable); fails != tt.fails {
				t.Errorf("failing %v, want extra-writable-mount %v", got, tt.fails)
			}
		})
	}
}
