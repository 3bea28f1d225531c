package kube_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/yannh/kubeconform/pkg/resource"
	"github.com/yannh/kubeconform/pkg/validator"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/agentbox/agentbox/kube"
)

// schemaLocation is where the schemas generated offline from the
// Kubernetes OpenAPI and from the CRDs of agent-sandbox and the Security
// Profiles Operator (tools/kube/crds.txt) lie (tools/kube/schemagen; see
// docs/kube.md).
var schemaLocation = filepath.Join("testdata", "kubeconform", "{{ .ResourceKind }}{{ .KindSuffix }}.json")

func kubeconform(t *testing.T) validator.Validator {
	t.Helper()
	v, err := validator.New([]string{schemaLocation}, validator.Opts{Strict: true, KubernetesVersion: "1.37.2"})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// Every rendered object passes kubeconform, strict, against the schemas of
// the Kubernetes version the API server tier runs and of the CRDs' pinned
// versions (agent-sandbox's SandboxTemplate and Sandbox, the operator's
// SeccompProfile); the agent-sandbox kinds' pod templates are also
// validated as the Pods they become.
func TestRenderPassesKubeconform(t *testing.T) {
	v := kubeconform(t)
	for name, out := range renderings(t) {
		objs := out.Objects
		for _, obj := range out.Objects {
			switch x := obj.(type) {
			case *kube.SandboxTemplate:
				objs = append(objs, &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: metav1.ObjectMeta{Name: x.Name, Labels: x.Spec.PodTemplate.Metadata.Labels}, Spec: x.Spec.PodTemplate.Spec})
			case *kube.Sandbox:
				objs = append(objs, &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: metav1.ObjectMeta{Name: x.Name, Labels: x.Spec.PodTemplate.Metadata.Labels}, Spec: x.Spec.PodTemplate.Spec})
			}
		}
		for i, obj := range objs {
			b, err := yaml.Marshal(obj)
			if err != nil {
				t.Fatal(err)
			}
			r := v.ValidateResource(resource.Resource{Path: name, Bytes: b})
			if r.Status != validator.Valid {
				t.Errorf("%s: object %d (%T): kubeconform status %d: %v %+v", name, i, obj, r.Status, r.Err, r.ValidationErrors)
			}
		}
	}
}

// The schemas are strict and typed: a misspelled field or a wrong type in
// a rendered object is invalid, so the test above can fail.
func TestKubeconformRefusesAFault(t *testing.T) {
	v := kubeconform(t)
	out := render(t)
	var pod []byte
	for _, obj := range out.Objects {
		b, _ := yaml.Marshal(obj)
		if strings.Contains(string(b), "kind: Pod\n") {
			pod = b
		}
	}
	for name, bad := range map[string]string{
		"unknown field": strings.Replace(string(pod), "readOnlyRootFilesystem: true", "readOnlyRootFilesytem: true", 1),
		"wrong type":    strings.Replace(string(pod), "hostUsers: false", "hostUsers: \"no\"", 1),
	} {
		if bad == string(pod) {
			t.Fatalf("%s: the edit did not apply", name)
		}
		if r := v.ValidateResource(resource.Resource{Path: name, Bytes: []byte(bad)}); r.Status != validator.Invalid {
			t.Errorf("%s: status %d (%v), want invalid", name, r.Status, r.Err)
		}
	}
}

// The CRD schemas are strict too: a misspelled field of a SandboxTemplate,
// a value outside an enum, and a SeccompProfile action the operator does
// not know are invalid.
func TestKubeconformRefusesCRDFaults(t *testing.T) {
	v := kubeconform(t)
	byKind := map[string]string{}
	for _, out := range []*kube.Output{renderings(t)["agent-sandbox-spo"]} {
		for _, obj := range out.Objects {
			b, _ := yaml.Marshal(obj)
			byKind[obj.GetObjectKind().GroupVersionKind().Kind] = string(b)
		}
	}
	for name, c := range map[string]struct{ kind, old, new string }{
		"template: unknown field": {"SandboxTemplate", "networkPolicyManagement: Managed", "networkPolicyManagment: Managed"},
		"template: enum":          {"SandboxTemplate", "envVarsInjectionPolicy: Disallowed", "envVarsInjectionPolicy: Sometimes"},
		"sandbox: pod field":      {"Sandbox", "readOnlyRootFilesystem: true", "readOnlyRootFilesytem: true"},
		"seccomp: unknown action": {"SeccompProfile", "defaultAction: SCMP_ACT_ERRNO", "defaultAction: SCMP_ACT_MAYBE"},
		"seccomp: unknown field":  {"SeccompProfile", "defaultAction: SCMP_ACT_ERRNO", "defaultErrnoRet: 1\n  defaultAction: SCMP_ACT_ERRNO"},
	} {
		doc := byKind[c.kind]
		bad := strings.Replace(doc, c.old, c.new, 1)
		if doc == "" || bad == doc {
			t.Fatalf("%s: the edit did not apply", name)
		}
		if r := v.ValidateResource(resource.Resource{Path: name, Bytes: []byte(bad)}); r.Status != validator.Invalid {
			t.Errorf("%s: status %d (%v), want invalid", name, r.Status, r.Err)
		}
	}
}
