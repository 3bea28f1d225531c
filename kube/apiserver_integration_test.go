//go:build integration

package kube_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/agentbox/agentbox/audit"
	"github.com/agentbox/agentbox/audit/manifest"
	"github.com/agentbox/agentbox/internal/testutil"
	"github.com/agentbox/agentbox/kube"
)

// apiServer is the kube-apiserver scripts/kube-up.sh started: built from
// k8s.io/kubernetes, with etcd, on loopback, with PodSecurity admission.
type apiServer struct {
	base  *url.URL
	token string
	http  *http.Client
	// crds is the directory of the CustomResourceDefinitions kube-up.sh
	// fetched (tools/kube/crds.txt).
	crds string
}

// requireAPIServer reads kube-up.sh's env file and checks that the server
// answers on a loopback address; without it the test skips (fails when
// AGENTBOX_TEST_STRICT=1).
func requireAPIServer(t *testing.T) *apiServer {
	t.Helper()
	testutil.RequireRoot(t)
	dir := os.Getenv("AGENTBOX_TEST_KUBE")
	if dir == "" {
		dir = "/run/agentbox-kube"
	}
	env := map[string]string{}
	f, err := os.Open(filepath.Join(dir, "env"))
	if err != nil {
		testutil.Skip(t, "no kube-apiserver: "+err.Error()+" (run scripts/kube-up.sh)")
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			env[k] = v
		}
	}
	base, err := url.Parse(env["AGENTBOX_KUBE_SERVER"])
	if err != nil || base.Scheme != "https" {
		t.Fatalf("AGENTBOX_KUBE_SERVER %q: want an https URL", env["AGENTBOX_KUBE_SERVER"])
	}
	if ip := net.ParseIP(base.Hostname()); ip == nil || !ip.IsLoopback() {
		t.Fatalf("AGENTBOX_KUBE_SERVER %s is not a loopback address: the test talks to loopback only", base)
	}
	tok, err := os.ReadFile(env["AGENTBOX_KUBE_TOKEN_FILE"])
	if err != nil {
		t.Fatal(err)
	}
	ca, err := os.ReadFile(env["AGENTBOX_KUBE_CA_FILE"])
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		t.Fatalf("%s holds no certificate", env["AGENTBOX_KUBE_CA_FILE"])
	}
	s := &apiServer{base: base, token: strings.TrimSpace(string(tok)), crds: env["AGENTBOX_KUBE_CRDS"], http: &http.Client{
		Timeout:   30 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, Proxy: nil},
	}}
	if code, body, _ := s.do(t, http.MethodGet, "/readyz", "", nil); code != http.StatusOK {
		testutil.Skip(t, fmt.Sprintf("kube-apiserver at %s is not ready (%d %s): run scripts/kube-up.sh", base, code, body))
	}
	return s
}

// do sends one request and returns the status, the body and the API
// server's warnings (the Warning headers kubectl prints).
func (s *apiServer) do(t *testing.T, method, path, ctype string, body []byte) (int, []byte, []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	u := *s.base
	u.Path, u.RawQuery, _ = strings.Cut(path, "?")
	req, err := http.NewRequestWithContext(ctx, method, u.String(), bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	req.Header.Set("Accept", "application/json")
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := s.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b, resp.Header.Values("Warning")
}

// resources maps each kind the renderer writes to its API path segment
// (group/version prefix, plural, namespaced).
var resources = map[string]struct {
	prefix, plural string
	namespaced     bool
}{
	"Namespace":      {"/api/v1", "namespaces", false},
	"ServiceAccount": {"/api/v1", "serviceaccounts", true},
	"ConfigMap":      {"/api/v1", "configmaps", true},
	"Service":        {"/api/v1", "services", true},
	"Pod":            {"/api/v1", "pods", true},
	"Deployment":     {"/apis/apps/v1", "deployments", true},
	"DaemonSet":      {"/apis/apps/v1", "daemonsets", true},
	"Job":            {"/apis/batch/v1", "jobs", true},
	"NetworkPolicy":  {"/apis/networking.k8s.io/v1", "networkpolicies", true},

	"PersistentVolumeClaim":    {"/api/v1", "persistentvolumeclaims", true},
	"CustomResourceDefinition": {"/apis/apiextensions.k8s.io/v1", "customresourcedefinitions", false},
	"SandboxTemplate":          {"/apis/extensions.agents.x-k8s.io/v1beta1", "sandboxtemplates", true},
	"Sandbox":                  {"/apis/agents.x-k8s.io/v1beta1", "sandboxes", true},
	"SeccompProfile":           {"/apis/security-profiles-operator.x-k8s.io/v1beta1", "seccompprofiles", false},
}

// apply is `kubectl apply --server-side`: a PATCH of the whole object with
// the apply content type and a field manager.
func (s *apiServer) apply(t *testing.T, doc []byte) (kind, name string, code int, body []byte, warnings []string) {
	t.Helper()
	var head struct {
		Kind     string `json:"kind"`
		Metadata struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"metadata"`
	}
	if err := yaml.Unmarshal(doc, &head); err != nil {
		t.Fatal(err)
	}
	res, ok := resources[head.Kind]
	if !ok {
		t.Fatalf("no API path for kind %s", head.Kind)
	}
	path := res.prefix
	if res.namespaced {
		path += "/namespaces/" + head.Metadata.Namespace
	}
	path += "/" + res.plural + "/" + head.Metadata.Name + "?fieldManager=agentbox-test&force=true&fieldValidation=Strict"
	code, body, warnings = s.do(t, http.MethodPatch, path, "application/apply-patch+yaml", doc)
	return head.Kind, head.Metadata.Name, code, body, warnings
}

// applyCRDs applies the CustomResourceDefinitions kube-up.sh fetched
// (agent-sandbox's Sandbox and SandboxTemplate, the Security Profiles
// Operator's SeccompProfile and AppArmorProfile) and waits until the API
// server serves each.
func (s *apiServer) applyCRDs(t *testing.T) {
	t.Helper()
	if s.crds == "" {
		t.Fatal("kube-up.sh's env names no CRD directory (AGENTBOX_KUBE_CRDS): rerun scripts/kube-up.sh")
	}
	files, err := filepath.Glob(filepath.Join(s.crds, "*.yaml"))
	if err != nil || len(files) != 4 {
		t.Fatalf("CRDs in %s: %v %v, want the 4 tools/kube/crds.txt pins", s.crds, files, err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		_, name, code, body, _ := s.apply(t, b)
		if code != http.StatusOK && code != http.StatusCreated {
			t.Fatalf("apply CRD %s: %d %s", f, code, body)
		}
		s.waitEstablished(t, name)
	}
}

func (s *apiServer) waitEstablished(t *testing.T, name string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, body, _ := s.do(t, http.MethodGet, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"+name, "", nil)
		var crd struct {
			Status struct {
				Conditions []struct{ Type, Status string }
			}
		}
		if code == http.StatusOK && json.Unmarshal(body, &crd) == nil {
			for _, c := range crd.Status.Conditions {
				if c.Type == "Established" && c.Status == "True" {
					return
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("CRD %s not established after 30s: %d %s", name, code, body)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func marshal(t *testing.T, o runtime.Object) []byte {
	t.Helper()
	b, err := yaml.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// freshOptions are the test options in a namespace of their own, with a
// gateway ClusterIP of kube-up.sh's service range (10.96.0.0/12) that no
// earlier run allocated: the API server refuses an address in use.
func freshOptions(t *testing.T) kube.Options {
	t.Helper()
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	o := testOptions()
	o.Namespace = "agentbox-it-" + hex.EncodeToString(b)
	o.GatewayIP = fmt.Sprintf("10.%d.%d.%d", 100+b[0]%8, b[1], 2+b[2]%250)
	return o
}

// The rendered manifests (the agent as a Pod, and as a Job), applied
// server-side into their restricted namespace on a real kube-apiserver,
// are all admitted without a warning (Pod Security warns on a Job's
// template it would refuse as a pod), and the stored pod keeps the
// hardening: no field dropped by the server.
func TestAPIServerAdmitsTheRendering(t *testing.T) {
	s := requireAPIServer(t)
	for _, job := range []bool{false, true} {
		o := freshOptions(t)
		o.Job = job
		out, err := kube.Render(testPlan(), o)
		if err != nil {
			t.Fatal(err)
		}
		for _, obj := range out.Objects {
			kind, name, code, body, warnings := s.apply(t, marshal(t, obj))
			if code != http.StatusOK && code != http.StatusCreated {
				t.Fatalf("apply %s/%s: %d %s", kind, name, code, body)
			}
			if len(warnings) > 0 {
				t.Errorf("apply %s/%s: the API server warns: %q", kind, name, warnings)
			}
		}
		path := "/api/v1/namespaces/" + o.Namespace + "/pods/" + kube.AgentName
		if job {
			path = "/apis/batch/v1/namespaces/" + o.Namespace + "/jobs/" + kube.AgentName
		}
		code, body, _ := s.do(t, http.MethodGet, path, "", nil)
		if code != http.StatusOK {
			t.Fatalf("get %s: %d %s", path, code, body)
		}
		var stored struct {
			Spec struct {
				corev1.PodSpec
				Template *corev1.PodTemplateSpec `json:"template"`
			} `json:"spec"`
		}
		if err := json.Unmarshal(body, &stored); err != nil {
			t.Fatal(err)
		}
		sp := stored.Spec.PodSpec
		if job {
			sp = stored.Spec.Template.Spec
		}
		if sp.HostUsers == nil || *sp.HostUsers || sp.AutomountServiceAccountToken == nil || *sp.AutomountServiceAccountToken || sp.SecurityContext.SeccompProfile == nil {
			t.Errorf("%s lost its hardening: hostUsers %v automount %v seccomp %+v", path, sp.HostUsers, sp.AutomountServiceAccountToken, sp.SecurityContext.SeccompProfile)
		}
		if !job {
			continue
		}
		// The warning check above can fail: a Job whose template Pod
		// Security would refuse is stored, with a warning.
		var j *batchv1.Job
		for _, obj := range out.Objects {
			if x, ok := obj.(*batchv1.Job); ok {
				j = x.DeepCopy()
			}
		}
		j.Name = "fault-job"
		j.Spec.Template.Spec.HostUsers = nil
		j.Spec.Template.Spec.SecurityContext.RunAsNonRoot = nil
		j.Spec.Template.Spec.SecurityContext.RunAsUser = ptr(int64(0))
		if _, _, code, body, warnings := s.apply(t, marshal(t, j)); code != http.StatusCreated || !strings.Contains(strings.Join(warnings, " "), "would violate PodSecurity") || !strings.Contains(strings.Join(warnings, " "), "runAsUser=0") {
			t.Errorf("a Job running as root: %d %s, warnings %q: want it stored with Pod Security's warning", code, body, warnings)
		}
	}
}

// fault is one of the lab's faults in its Kubernetes form, added to the
// rendered agent pod; rejected says whether Pod Security admission refuses
// it (and the check its message names), code the agentbox finding.
type fault struct {
	name     string
	edit     func(p *corev1.Pod)
	rejected string // a substring of the admission error; "" when admitted
	code     string // the agentbox finding; "" when none
}

func agentContainer(p *corev1.Pod) *corev1.Container { return &p.Spec.Containers[0] }

func hostPath(p *corev1.Pod, path string) {
	p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: path}}})
	c := agentContainer(p)
	c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "host", MountPath: "/host"})
}

var labFaults = []fault{
	{"hostPath docker.sock", func(p *corev1.Pod) { hostPath(p, "/var/run/docker.sock") }, `volume "host" uses restricted volume type "hostPath"`, audit.CodeContainerSocket},
	{"hostPath home", func(p *corev1.Pod) { hostPath(p, "/home/ana") }, `volume "host" uses restricted volume type "hostPath"`, audit.CodeHomeDirectory},
	// The API server's validation refuses hostNetwork and privileged
	// beside hostUsers: false outright, so these faults share the node's
	// users, as a pod that has them must.
	{"hostNetwork", func(p *corev1.Pod) { p.Spec.HostNetwork, p.Spec.HostUsers = true, nil }, "host namespaces (hostNetwork=true)", audit.CodeHostNetwork},
	{"privileged", func(p *corev1.Pod) {
		p.Spec.HostUsers = nil
		sc := agentContainer(p).SecurityContext
		sc.Privileged, sc.AllowPrivilegeEscalation = ptr(true), nil
	}, `privileged (container "agent" must not set securityContext.privileged=true)`, audit.CodePrivileged},
	{"added caps", func(p *corev1.Pod) {
		agentContainer(p).SecurityContext.Capabilities.Add = []corev1.Capability{"SYS_ADMIN"}
	}, "unrestricted capabilities", audit.CodeCapsAdded},
	{"allowPrivilegeEscalation", func(p *corev1.Pod) { agentContainer(p).SecurityContext.AllowPrivilegeEscalation = ptr(true) }, "allowPrivilegeEscalation != false", audit.CodeNewPrivileges},
	{"runAsUser 0 on the node's users", func(p *corev1.Pod) {
		p.Spec.HostUsers = nil
		p.Spec.SecurityContext.RunAsUser, p.Spec.SecurityContext.RunAsNonRoot = ptr(int64(0)), nil
	}, "runAsUser=0 (pod must not set runAsUser=0)", audit.CodeRunsAsRoot},
	// Root of the pod's own user namespace (hostUsers: false) is not the
	// node's root: Pod Security admits it by design, and so does agentbox.
	{"runAsUser 0 in a user namespace", func(p *corev1.Pod) {
		p.Spec.SecurityContext.RunAsUser, p.Spec.SecurityContext.RunAsNonRoot = ptr(int64(0)), nil
	}, "", ""},
	{"secret in env", func(p *corev1.Pod) {
		c := agentContainer(p)
		c.Env = append(c.Env, corev1.EnvVar{Name: "OPENAI_API_KEY", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: kube.KeySecret}, Key: "openai_api_key"}}})
	}, "", audit.CodeSecretInEnv},
	{"automountServiceAccountToken", func(p *corev1.Pod) { p.Spec.AutomountServiceAccountToken = ptr(true) }, "", audit.CodeServiceAccountToken},
}

func ptr[T any](v T) *T { return &v }

// Each lab fault added to the rendered pod is refused by the real API
// server's Pod Security admission or, where Pod Security has no check for
// it, admitted and named by agentbox's audit of the same objects. The two
// agree where both look.
func TestAPIServerRefusesTheLabFaults(t *testing.T) {
	s := requireAPIServer(t)
	o := freshOptions(t)
	out, err := kube.Render(testPlan(), o)
	if err != nil {
		t.Fatal(err)
	}
	var base *corev1.Pod
	var others [][]byte
	for _, obj := range out.Objects {
		if p, ok := obj.(*corev1.Pod); ok {
			base = p
			continue
		}
		if _, _, code, body, _ := s.apply(t, marshal(t, obj)); code != http.StatusOK && code != http.StatusCreated {
			t.Fatalf("apply: %d %s", code, body)
		}
		others = append(others, marshal(t, obj))
	}
	for i, f := range labFaults {
		t.Run(f.name, func(t *testing.T) {
			p := base.DeepCopy()
			p.Name = fmt.Sprintf("fault-%d", i)
			f.edit(p)
			doc := marshal(t, p)
			_, _, code, body, _ := s.apply(t, doc)
			var status struct{ Message string }
			_ = json.Unmarshal(body, &status)
			switch {
			case f.rejected != "" && code != http.StatusForbidden:
				t.Errorf("not refused by admission (%d), want Pod Security to refuse it: %s", code, body)
			case f.rejected != "" && !(strings.Contains(status.Message, `violates PodSecurity "restricted:latest"`) && strings.Contains(status.Message, f.rejected)):
				t.Errorf("refused for another reason, want %q: %s", f.rejected, status.Message)
			case f.rejected == "" && code != http.StatusOK && code != http.StatusCreated:
				t.Errorf("refused (%d), want it admitted: %s", code, body)
			}
			codes := auditCodes(t, append(others, doc), p.Name)
			if f.code != "" && !codes[f.code] {
				t.Errorf("agentbox's audit does not name %s; it found %v", f.code, codes)
			}
			if f.code == "" && len(codes) > 0 {
				t.Errorf("agentbox's audit found %v, want nothing", codes)
			}
		})
	}
}

// auditCodes audits the objects as one manifest and returns the failing
// finding codes of the named pod.
func auditCodes(t *testing.T, docs [][]byte, pod string) map[string]bool {
	t.Helper()
	path := filepath.Join(t.TempDir(), "pod.yaml")
	if err := os.WriteFile(path, bytes.Join(docs, []byte("---\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	cs, err := manifest.LoadKube([]string{path}, manifest.KubeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	codes := map[string]bool{}
	for _, c := range audit.Audit(cs, audit.Options{}).Containers {
		if !strings.HasPrefix(c.Name, "Pod/"+pod+"/") {
			continue
		}
		for _, f := range c.Findings {
			if f.Fails() {
				codes[f.Code] = true
			}
		}
	}
	return codes
}

// Every other form agentbox kube writes is admitted by the real API server
// too, the CustomResourceDefinitions of agent-sandbox and the Security
// Profiles Operator applied first, with strict field validation (the
// CRDs' structural schemas refuse an unknown field instead of pruning it):
// the agent as a SandboxTemplate and a Sandbox, the operator's
// SeccompProfile, the profile installer in its privileged namespace, and a
// PVC workspace, rendered or named. The stored objects keep what agentbox
// wrote: nothing pruned.
func TestAPIServerAdmitsEveryForm(t *testing.T) {
	s := requireAPIServer(t)
	s.applyCRDs(t)
	for name, edit := range map[string]func(*kube.Options){
		"agent-sandbox": func(o *kube.Options) { o.Format = kube.FormatAgentSandbox },
		"agent-sandbox-spo": func(o *kube.Options) {
			o.Format, o.Profiles, o.WorkspaceSize = kube.FormatAgentSandbox, kube.ProfilesSPO, "5Gi"
		},
		"spo": func(o *kube.Options) { o.Profiles, o.Arch = kube.ProfilesSPO, "arm64" },
		"files": func(o *kube.Options) {
			o.Profiles, o.InstallerImage, o.WorkspaceClaim = kube.ProfilesFiles, "example.org/installer:1", "team-workspace"
		},
		"job-files-pvc": func(o *kube.Options) {
			o.Job, o.Profiles, o.InstallerImage, o.WorkspaceSize = true, kube.ProfilesFiles, "example.org/installer:1", "10Gi"
		},
	} {
		t.Run(name, func(t *testing.T) {
			o := freshOptions(t)
			edit(&o)
			out, err := kube.Render(testPlan(), o)
			if err != nil {
				t.Fatal(err)
			}
			for _, obj := range out.Objects {
				kind, name, code, body, warnings := s.apply(t, marshal(t, obj))
				if code != http.StatusOK && code != http.StatusCreated {
					t.Fatalf("apply %s/%s: %d %s", kind, name, code, body)
				}
				if len(warnings) > 0 {
					t.Errorf("apply %s/%s: the API server warns: %q", kind, name, warnings)
				}
				s.storedAsWritten(t, obj)
			}
		})
	}
}

// storedAsWritten reads an applied object back and checks that every
// field agentbox wrote into its spec is stored (a CRD schema that pruned
// one would lose it silently).
func (s *apiServer) storedAsWritten(t *testing.T, obj runtime.Object) {
	t.Helper()
	var head struct {
		Kind     string `json:"kind"`
		Metadata struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"metadata"`
		Spec json.RawMessage `json:"spec"`
	}
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &head); err != nil {
		t.Fatal(err)
	}
	switch head.Kind {
	case "SandboxTemplate", "Sandbox", "SeccompProfile", "DaemonSet", "PersistentVolumeClaim":
	default:
		return
	}
	res := resources[head.Kind]
	path := res.prefix
	if res.namespaced {
		path += "/namespaces/" + head.Metadata.Namespace
	}
	code, body, _ := s.do(t, http.MethodGet, path+"/"+res.plural+"/"+head.Metadata.Name, "", nil)
	if code != http.StatusOK {
		t.Fatalf("get %s/%s: %d %s", head.Kind, head.Metadata.Name, code, body)
	}
	var stored struct {
		Spec json.RawMessage `json:"spec"`
	}
	if err := json.Unmarshal(body, &stored); err != nil {
		t.Fatal(err)
	}
	var want, got any
	if err := json.Unmarshal(head.Spec, &want); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(stored.Spec, &got); err != nil {
		t.Fatal(err)
	}
	if missing := notIn(want, got, "spec"); missing != "" {
		t.Errorf("%s/%s: the stored object lost %s", head.Kind, head.Metadata.Name, missing)
	}
}

// notIn returns the first path of want that got does not hold with the
// same value (got may hold more: the server's defaults).
func notIn(want, got any, path string) string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return path
		}
		for k, v := range w {
			if m := notIn(v, g[k], path+"."+k); m != "" {
				return m
			}
		}
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return path
		}
		for i := range w {
			if m := notIn(w[i], g[i], fmt.Sprintf("%s[%d]", path, i)); m != "" {
				return m
			}
		}
	default:
		if fmt.Sprint(want) != fmt.Sprint(got) {
			return path
		}
	}
	return ""
}

// The CRDs' schemas refuse what they do not declare: a misspelled field of
// a Sandbox's pod, a SandboxTemplate value outside its enum and a
// SeccompProfile action the operator does not know are rejected, so the
// admissions above are the schemas' verdict, not a pass-through.
func TestAPIServerCRDsRefuseFaults(t *testing.T) {
	s := requireAPIServer(t)
	s.applyCRDs(t)
	o := freshOptions(t)
	o.Format, o.Profiles = kube.FormatAgentSandbox, kube.ProfilesSPO
	out, err := kube.Render(testPlan(), o)
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string]string{}
	for _, obj := range out.Objects {
		doc := string(marshal(t, obj))
		kind := obj.GetObjectKind().GroupVersionKind().Kind
		if kind == "Namespace" {
			if _, _, code, body, _ := s.apply(t, []byte(doc)); code != http.StatusOK && code != http.StatusCreated {
				t.Fatalf("apply namespace: %d %s", code, body)
			}
		}
		docs[kind] = doc
	}
	for name, c := range map[string]struct{ kind, old, new, want string }{
		"sandbox: unknown pod field": {"Sandbox", "readOnlyRootFilesystem: true", "readOnlyRootFilesytem: true", "field not declared in schema"},
		"template: enum":             {"SandboxTemplate", "envVarsInjectionPolicy: Disallowed", "envVarsInjectionPolicy: Sometimes", "Unsupported value"},
		"seccomp: action":            {"SeccompProfile", "defaultAction: SCMP_ACT_ERRNO", "defaultAction: SCMP_ACT_MAYBE", "Unsupported value"},
	} {
		t.Run(name, func(t *testing.T) {
			bad := strings.Replace(docs[c.kind], c.old, c.new, 1)
			bad = strings.Replace(bad, "name: agentbox-", "name: fault-", 1)
			if bad == docs[c.kind] {
				t.Fatal("the edit did not apply")
			}
			_, _, code, body, _ := s.apply(t, []byte(bad))
			// Server-side apply builds a typed patch from the CRD's
			// schema: an undeclared field fails there (a 500 from this
			// server), an enum at validation (422).
			if code < 400 || !strings.Contains(string(body), c.want) {
				t.Errorf("%d %s: want it refused (%s)", code, body, c.want)
			}
		})
	}
}
