package kube

import (
	"encoding/json"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Formats of the rendering (Options.Format).
const (
	// FormatManifests writes the agent as a Pod (or a Job).
	FormatManifests = "manifests"
	// FormatAgentSandbox writes the agent as agent-sandbox's SandboxTemplate
	// and a Sandbox made from the same pod template.
	FormatAgentSandbox = "agent-sandbox"
)

// agent-sandbox's API groups (kubernetes-sigs/agent-sandbox, v1beta1):
// Sandbox is core, SandboxTemplate an extension. The fields agentbox
// writes are declared here, so that agentbox does not link the project's
// module; they are checked against its CRDs at the version
// tools/kube/crds.txt pins (kubeconform schemas, and the CRDs applied to
// the test API server with strict field validation).
const (
	sandboxAPIVersion         = "agents.x-k8s.io/v1beta1"
	sandboxTemplateAPIVersion = "extensions.agents.x-k8s.io/v1beta1"
)

// SandboxPodTemplate is agent-sandbox's pod template: labels and
// annotations, and a PodSpec.
type SandboxPodTemplate struct {
	Metadata SandboxPodMetadata `json:"metadata"`
	Spec     corev1.PodSpec     `json:"spec"`
}

// SandboxPodMetadata is the metadata a sandbox's pod gets.
type SandboxPodMetadata struct {
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// SandboxNetworkPolicy is the ingress and egress of the NetworkPolicy the
// agent-sandbox controller manages for a template's pods.
type SandboxNetworkPolicy struct {
	Ingress []networkingv1.NetworkPolicyIngressRule `json:"ingress,omitempty"`
	Egress  []networkingv1.NetworkPolicyEgressRule  `json:"egress,omitempty"`
}

// SandboxClaimTemplate is a PersistentVolumeClaim the controller creates
// for each Sandbox, named NAME-SANDBOX, and mounts as the pod's volume
// NAME (agent-sandbox's PersistentVolumeClaimTemplate).
type SandboxClaimTemplate struct {
	Metadata SandboxClaimMetadata             `json:"metadata"`
	Spec     corev1.PersistentVolumeClaimSpec `json:"spec"`
}

// SandboxClaimMetadata names a claim template.
type SandboxClaimMetadata struct {
	Name   string            `json:"name,omitempty"`
	Labels map[string]string `json:"labels,omitempty"`
}

// SandboxTemplateSpec is the part of a SandboxTemplate's spec agentbox
// writes: the pod template, its claims and the managed network policy.
type SandboxTemplateSpec struct {
	PodTemplate             SandboxPodTemplate     `json:"podTemplate"`
	VolumeClaimTemplates    []SandboxClaimTemplate `json:"volumeClaimTemplates,omitempty"`
	NetworkPolicy           *SandboxNetworkPolicy  `json:"networkPolicy,omitempty"`
	NetworkPolicyManagement string                 `json:"networkPolicyManagement,omitempty"`
	EnvVarsInjectionPolicy  string                 `json:"envVarsInjectionPolicy,omitempty"`
}

// SandboxTemplate is agent-sandbox's reusable sandbox definition.
type SandboxTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              SandboxTemplateSpec `json:"spec"`
}

// SandboxSpec is the part of a Sandbox's spec agentbox writes.
type SandboxSpec struct {
	PodTemplate          SandboxPodTemplate     `json:"podTemplate"`
	VolumeClaimTemplates []SandboxClaimTemplate `json:"volumeClaimTemplates,omitempty"`
}

// Sandbox is agent-sandbox's one sandbox: a pod with a stable identity.
type Sandbox struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              SandboxSpec `json:"spec"`
}

// DeepCopyObject makes the kinds runtime.Objects.
func (t *SandboxTemplate) DeepCopyObject() runtime.Object { return deepCopy(t) }

// DeepCopyObject makes the kinds runtime.Objects.
func (s *Sandbox) DeepCopyObject() runtime.Object { return deepCopy(s) }

func deepCopy[T any](v *T) *T {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // the types hold nothing json cannot encode
	}
	out := new(T)
	if err := json.Unmarshal(b, out); err != nil {
		panic(err)
	}
	return out
}

// agentSandbox renders the agent pod as a SandboxTemplate whose managed
// NetworkPolicy lets it reach the gateway alone (the controller's default
// would open the public internet), which injects no environment variable,
// and a Sandbox of the same pod. The agent's own NetworkPolicy stays in the
// rendering, so a Sandbox's pod is gateway-only even where no template's
// policy selects it.
func (r *renderer) agentSandbox(m metav1.ObjectMeta, spec corev1.PodSpec) {
	tmpl := SandboxPodTemplate{Metadata: SandboxPodMetadata{Labels: m.Labels, Annotations: m.Annotations}, Spec: spec}
	claims := r.sandboxClaims()
	r.add(&SandboxTemplate{TypeMeta: typeMeta(sandboxTemplateAPIVersion, "SandboxTemplate"), ObjectMeta: m, Spec: SandboxTemplateSpec{
		PodTemplate:             tmpl,
		VolumeClaimTemplates:    claims,
		NetworkPolicyManagement: "Managed",
		EnvVarsInjectionPolicy:  "Disallowed",
		NetworkPolicy:           &SandboxNetworkPolicy{Egress: agentEgress()},
	}})
	r.add(&Sandbox{TypeMeta: typeMeta(sandboxAPIVersion, "Sandbox"), ObjectMeta: m, Spec: SandboxSpec{PodTemplate: tmpl, VolumeClaimTemplates: claims}})
}

// sandboxClaims is the workspace of --workspace-size as agent-sandbox's
// volume claim template: one claim per Sandbox (workspace-SANDBOX), which
// the controller creates, owns and mounts as the pod's workspace volume.
func (r *renderer) sandboxClaims() []SandboxClaimTemplate {
	if r.o.WorkspaceSize == "" {
		return nil
	}
	return []SandboxClaimTemplate{{
		Metadata: SandboxClaimMetadata{Name: workspaceVolume},
		Spec:     r.claimSpec(),
	}}
}
