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
// Kubernetes OpenAPI lie (tools/kube/schemagen; see docs/kube.md).
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
// the Kubernetes version the API server tier runs.
func TestRenderPassesKubeconform(t *testing.T) {
	v := kubeconform(t)
	for name, out := range renderings(t) {
		for i, obj := range out.Objects {
			// agent-sandbox's CRD schemas are not in the repository: its
			// kinds' pod template is validated as the Pod it becomes.
			switch x := obj.(type) {
			case *kube.SandboxTemplate:
				obj = &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: metav1.ObjectMeta{Name: x.Name, Labels: x.Spec.PodTemplate.Metadata.Labels}, Spec: x.Spec.PodTemplate.Spec}
			case *kube.Sandbox:
				obj = &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: metav1.ObjectMeta{Name: x.Name, Labels: x.Spec.PodTemplate.Metadata.Labels}, Spec: x.Spec.PodTemplate.Spec}
			}
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
