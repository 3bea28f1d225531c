// Package kube renders a sandbox plan as Kubernetes objects: agentbox's
// boundary in the form a cluster enforces it. It is pure: it reads nothing,
// writes nothing and runs nothing; the launcher audits what it renders
// (audit/manifest.LoadKube, the Pod Security evaluator) before writing it.
//
// What is rendered, in apply order (one multi-document file, ManifestFile):
//
//   - a Namespace labelled pod-security.kubernetes.io/enforce: restricted,
//     so the API server itself refuses a weaker pod there;
//   - the ServiceAccount both pods run as, which mounts no token (the
//     namespace's default one is the controller manager's to create);
//   - the gateway: a ConfigMap with its config, a Deployment running
//     `agentbox gateway` from Options.GatewayImage, and a Service with a
//     fixed ClusterIP (Options.GatewayIP). The real model keys live in the
//     Secret KeySecret, which the user creates and which is mounted into the
//     gateway alone;
//   - two NetworkPolicies: the agent gets no ingress and egress only to the
//     gateway's pods on GatewayPort; the gateway gets ingress only from the
//     agent and egress only to DNS and the model routes' ports beyond the
//     cluster's private ranges;
//   - the agent Pod (or, with Options.Job, a Job of one pod that is never
//     retried, whose template is that pod): no capabilities, no privilege escalation, a read-only
//     root, the seccomp and AppArmor profiles of Options.Profiles,
//     hostUsers: false, resource limits, an emptyDir workspace (or a
//     PersistentVolumeClaim, Options.WorkspaceClaim or WorkspaceSize,
//     declared with the io.agentbox.workspace annotation), memory-backed emptyDirs for the plan's tmpfs
//     mounts, no service-account token, no service links. It reaches the
//     gateway at the Service's fixed address, given in its environment, so
//     it needs no DNS, and no egress rule allows DNS.
//
// With Options.Format FormatAgentSandbox the agent's pod is written as
// agent-sandbox's SandboxTemplate (its managed NetworkPolicy gateway-only)
// and a Sandbox instead (sandbox.go).
//
// With Options.Profiles ProfilesFiles, agentbox's seccomp and AppArmor
// profiles are written as files (Output.Files) and installed on the nodes
// by a DaemonSet in SystemNamespace; with ProfilesSPO the seccomp profile
// is a Security Profiles Operator SeccompProfile (profiles.go).
//
// Security-relevant defaults, and how to override them:
//
//   - Seccomp and AppArmor are the node runtime's default profiles
//     (ProfilesRuntime): installing agentbox's needs a privileged DaemonSet
//     or the operator, a cluster administrator's decision, so it is asked
//     for (Options.Profiles); the residual seccomp-runtime-default says so.
//   - The plan's pids limit has no pod field (it is the kubelet's
//     podPidsLimit); the residual pids-limit-kubelet says so.
//   - Host binds other than the workspace cannot be rendered: a hostPath
//     volume is what Pod Security restricted forbids. Render refuses them.
//   - The gateway's egress policy allows every public address on the model
//     routes' ports: a NetworkPolicy names addresses, not host names, so the
//     gateway's own allowlist (its config) decides which hosts. Output.Accept
//     carries that one finding of the gateway, with its reason.
package kube

import (
	"fmt"
	"net/netip"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/agentbox/agentbox/agents"
	"github.com/agentbox/agentbox/netpolicy"
	"github.com/agentbox/agentbox/policy"
	"github.com/agentbox/agentbox/seccomp/profiles"
)

// Names used in the rendered objects.
const (
	// DefaultNamespace is the namespace when Options leaves it empty.
	DefaultNamespace = "agentbox"
	// AgentName and GatewayName name the agent's Pod and the gateway's
	// Deployment, Service and ConfigMap.
	AgentName   = "agentbox-agent"
	GatewayName = "agentbox-gateway"
	// ServiceAccount is the pods' own service account, which mounts no
	// token: neither pod relies on the namespace's default one, which only
	// the controller manager creates.
	ServiceAccount = "agentbox"
	// KeySecret is the Secret holding the real model keys, one key per
	// route (KeyName), created by the user and mounted into the gateway only.
	KeySecret = "agentbox-gateway-keys"
	// ComponentLabel marks each pod with its part; the NetworkPolicies
	// select on it.
	ComponentLabel = "app.kubernetes.io/component"
	// GatewayPort is where the gateway listens.
	GatewayPort = 8080
	// KeyEnv holds the per-sandbox gateway key in both pods' environment.
	KeyEnv = "AGENT_GATEWAY_KEY"
	// GatewayUID is the gateway's uid and gid.
	GatewayUID = 65532
	// ManifestFile is the rendered file.
	ManifestFile = "agentbox.yaml"
)

// In-container paths of the gateway.
const (
	gatewayConfigDir = "/etc/agentbox"
	gatewayConfig    = gatewayConfigDir + "/gateway.yaml"
	secretsDir       = "/run/secrets/agentbox"
)

// Options are what the plan does not say.
type Options struct {
	// Image is the agent's image; Command its command (the adapter's).
	Image   string
	Command []string
	// Namespace is the namespace ("" for DefaultNamespace).
	Namespace string
	// GatewayImage is the image of the gateway: the agentbox binary, as
	// `agentbox compose --build` builds it, pushed where the cluster pulls.
	GatewayImage string
	// GatewayIP is the gateway Service's ClusterIP, a free address of the
	// cluster's service range: the agent reaches the gateway by it.
	GatewayIP string
	// Token is the per-sandbox gateway key (netpolicy.NewToken).
	Token string
	// CPU is the agent's CPU limit ("" for DefaultCPU).
	CPU string
	// Job renders the agent as a Job (one pod, never retried) instead of a
	// bare Pod.
	Job bool
	// Format is FormatManifests ("" too) or FormatAgentSandbox.
	Format string
	// Profiles is ProfilesRuntime ("" too), ProfilesFiles or ProfilesSPO;
	// InstallerImage is the profile installer's image (ProfilesFiles).
	Profiles       string
	InstallerImage string
	// Arch is the nodes' architecture (amd64 or arm64, "" for
	// DefaultArch): agentbox's seccomp profile names one, so with
	// ProfilesFiles or ProfilesSPO the agent pod is scheduled on it.
	Arch string
	// WorkspaceClaim mounts an existing PersistentVolumeClaim as the
	// workspace; WorkspaceSize renders one (WorkspaceClaimName) of that
	// size. Neither: an emptyDir.
	WorkspaceClaim, WorkspaceSize string
}

// WorkspaceClaimName is the PersistentVolumeClaim Options.WorkspaceSize
// renders.
const WorkspaceClaimName = "agentbox-workspace"

// DefaultCPU is the agent's CPU limit when Options leaves it empty: the
// plan has a CPU weight, a share, which no pod field expresses.
const DefaultCPU = "2"

// Gateway resources: enough to proxy one agent's model traffic.
const (
	gatewayMemory = "256Mi"
	gatewayCPU    = "500m"
)

// Output is a rendering: the objects in apply order and the file.
type Output struct {
	Objects []runtime.Object
	// Manifest is the objects as one multi-document YAML file.
	Manifest []byte
	// Agent is the adapter that prepared the command; Permission its mode.
	Agent      string
	Permission agents.Permission
	// Residuals are the plan's and the rendering's weaker layers.
	Residuals []policy.Residual
	// Accept are the findings the audit of the output is expected to
	// report and tolerate, each with its reason.
	Accept []policy.Acceptance
	// Notes are what the user must do before `kubectl apply`.
	Notes []string
	// Routes are the model routes whose real key the gateway reads.
	Routes []string
	// Files are written beside Manifest, by path relative to it: the
	// profiles of ProfilesFiles.
	Files map[string][]byte
	// SeccompRoot is the directory of Files that stands for the nodes'
	// kubelet seccomp root, where the audit finds the agent's Localhost
	// profile ("" when there is none).
	SeccompRoot string
	// Installer is the profile installer's accepted findings (ProfilesFiles).
	Installer *Installer
}

// InputError is input Render cannot use: the field and the fix.
type InputError struct {
	Field, Msg, Fix string
}

func (e *InputError) Error() string {
	s := e.Msg
	if e.Field != "" {
		s = e.Field + ": " + s
	}
	if e.Fix != "" {
		s += "; " + e.Fix
	}
	return s
}

// Render translates plan into Kubernetes objects.
func Render(plan *policy.Plan, o Options) (*Output, error) {
	if err := validate(plan, &o); err != nil {
		return nil, err
	}
	r := &renderer{plan: plan, o: o, out: &Output{Residuals: append([]policy.Residual(nil), plan.Residuals...)}}
	steps := []struct {
		name string
		run  func() error
	}{
		{"agent command", r.agent},
		{"namespace", r.namespace},
		{"service account", r.serviceAccount},
		{"gateway", r.gateway},
		{"network policies", r.networkPolicies},
		{"profiles", r.profiles},
		{"workspace", r.workspaceClaim},
		{"agent pod", r.agentPod},
		{"manifest", r.manifest},
	}
	for _, s := range steps {
		if err := s.run(); err != nil {
			return nil, fmt.Errorf("render %s: %w", s.name, err)
		}
	}
	return r.out, nil
}

type renderer struct {
	plan   *policy.Plan
	o      Options
	out    *Output
	launch agents.Launch
	// seccomp and appArmor are the agent pod's profiles (profiles).
	seccomp  *corev1.SeccompProfile
	appArmor *corev1.AppArmorProfile
}

func validate(plan *policy.Plan, o *Options) error {
	if o.Namespace == "" {
		o.Namespace = DefaultNamespace
	}
	if o.CPU == "" {
		o.CPU = DefaultCPU
	}
	ipFix := "pick a free address in the cluster's service range (the API server's --service-cluster-ip-range, e.g. 10.96.0.0/12 with kubeadm)"
	switch {
	case plan == nil:
		return &InputError{Msg: "no plan to render"}
	case plan.Rootfs.Image != "":
		return &InputError{Field: "rootfs", Msg: "an unpacked root does not apply to a pod", Fix: "name the agent's image with --image and drop rootfs"}
	case strings.TrimSpace(o.Image) == "":
		return &InputError{Field: "--image", Msg: "no agent image given", Fix: "pass --image IMAGE, an image with the agent installed that the cluster can pull"}
	case strings.TrimSpace(o.GatewayImage) == "":
		return &InputError{Field: "--gateway-image", Msg: "no gateway image given", Fix: "build it with `agentbox compose --build`, push it where the cluster pulls from and pass --gateway-image IMAGE"}
	case len(o.Command) == 0:
		return &InputError{Field: "command", Msg: "no agent and no command", Fix: "pass --agent codex|claude, or a command after --"}
	case !strings.HasPrefix(o.Token, netpolicy.TokenPrefix):
		return &InputError{Field: "token", Msg: "the gateway key is not a gateway token", Fix: "use netpolicy.NewToken"}
	case o.GatewayIP == "":
		return &InputError{Field: "--gateway-ip", Msg: "the agent has no DNS, so it reaches the gateway by a fixed Service address, and none was given", Fix: ipFix}
	}
	switch {
	case o.Format == "":
		o.Format = FormatManifests
	case o.Format != FormatManifests && o.Format != FormatAgentSandbox:
		return &InputError{Field: "--format", Msg: fmt.Sprintf("unknown format %q", o.Format), Fix: "use manifests or agent-sandbox"}
	case o.Format == FormatAgentSandbox && o.Job:
		return &InputError{Field: "--job", Msg: "a Sandbox is not a Job", Fix: "drop --job, or use --format manifests"}
	}
	if err := validateProfiles(o); err != nil {
		return err
	}
	if err := validateWorkspace(o); err != nil {
		return err
	}
	if _, err := netip.ParseAddr(o.GatewayIP); err != nil {
		return &InputError{Field: "--gateway-ip", Msg: fmt.Sprintf("%q is not an IP address", o.GatewayIP), Fix: ipFix}
	}
	if _, err := resource.ParseQuantity(o.CPU); err != nil {
		return &InputError{Field: "cpu", Msg: fmt.Sprintf("%q is not a CPU quantity", o.CPU), Fix: "write it as 2 or 500m"}
	}
	for _, m := range plan.Mounts {
		if m.Kind == policy.KindExtra {
			return &InputError{Field: "binds", Msg: fmt.Sprintf("the host bind %s cannot reach a pod: a hostPath volume is what Pod Security restricted forbids", m.Source), Fix: "drop it from binds; put what the agent needs into its image"}
		}
	}
	return nil
}

func validateProfiles(o *Options) error {
	if o.Profiles == "" {
		o.Profiles = ProfilesRuntime
	}
	if o.Arch == "" {
		o.Arch = DefaultArch
	}
	switch {
	case o.Profiles != ProfilesRuntime && o.Profiles != ProfilesFiles && o.Profiles != ProfilesSPO:
		return &InputError{Field: "--profiles", Msg: fmt.Sprintf("unknown profiles mode %q", o.Profiles), Fix: "use runtime, files or spo"}
	case o.Profiles == ProfilesFiles && strings.TrimSpace(o.InstallerImage) == "":
		return &InputError{Field: "--installer-image", Msg: "--profiles files installs the profiles with a DaemonSet, and no image was given for it", Fix: "pass --installer-image IMAGE, an image with /bin/sh, cp, mv, sleep and apparmor_parser (Debian's apparmor package)"}
	case o.Profiles != ProfilesFiles && o.InstallerImage != "":
		return &InputError{Field: "--installer-image", Msg: "only --profiles files has an installer", Fix: "drop --installer-image, or use --profiles files"}
	}
	if _, err := profiles.ArchForGOARCH(o.Arch); err != nil {
		return &InputError{Field: "--arch", Msg: err.Error(), Fix: "use amd64 or arm64"}
	}
	return nil
}

func validateWorkspace(o *Options) error {
	switch {
	case o.WorkspaceClaim != "" && o.WorkspaceSize != "":
		return &InputError{Field: "--workspace-claim", Msg: "--workspace-claim and --workspace-size both name the workspace", Fix: "use an existing claim, or have one rendered, not both"}
	case o.WorkspaceClaim != "":
		if errs := validation.IsDNS1123Subdomain(o.WorkspaceClaim); len(errs) > 0 {
			return &InputError{Field: "--workspace-claim", Msg: fmt.Sprintf("%q is not a PersistentVolumeClaim name: %s", o.WorkspaceClaim, strings.Join(errs, "; "))}
		}
	case o.WorkspaceSize != "":
		q, err := resource.ParseQuantity(o.WorkspaceSize)
		if err != nil || q.Sign() <= 0 {
			return &InputError{Field: "--workspace-size", Msg: fmt.Sprintf("%q is not a positive size", o.WorkspaceSize), Fix: "write it as 10Gi"}
		}
	}
	return nil
}

// agent adapts the command to the gateway at its fixed address.
func (r *renderer) agent() error {
	l, err := agents.Prepare(r.o.Command, nil, agents.Gateway{URL: r.gatewayURL(), Token: r.o.Token})
	if err != nil {
		return &InputError{Field: "command", Msg: err.Error()}
	}
	r.launch = l
	r.out.Agent, r.out.Permission = l.Agent, l.Permission
	return nil
}

func (r *renderer) gatewayURL() string {
	return fmt.Sprintf("http://%s", netip.AddrPortFrom(netip.MustParseAddr(r.o.GatewayIP), GatewayPort))
}

func (r *renderer) add(o runtime.Object) { r.out.Objects = append(r.out.Objects, o) }

// namespace is labelled so that Pod Security admission enforces, audits
// and warns at restricted.
func (r *renderer) namespace() error {
	ns := &corev1.Namespace{TypeMeta: typeMeta("v1", "Namespace"), ObjectMeta: metav1.ObjectMeta{Name: r.o.Namespace, Labels: map[string]string{
		"pod-security.kubernetes.io/enforce":         "restricted",
		"pod-security.kubernetes.io/enforce-version": "latest",
		"pod-security.kubernetes.io/audit":           "restricted",
		"pod-security.kubernetes.io/warn":            "restricted",
	}}}
	r.add(ns)
	return nil
}

// serviceAccount is the pods' account: no token is mounted from it.
func (r *renderer) serviceAccount() error {
	m := r.meta(ServiceAccount, "")
	delete(m.Labels, ComponentLabel)
	r.add(&corev1.ServiceAccount{TypeMeta: typeMeta("v1", "ServiceAccount"), ObjectMeta: m, AutomountServiceAccountToken: ptr(false)})
	return nil
}

func typeMeta(apiVersion, kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: apiVersion, Kind: kind}
}

func (r *renderer) meta(name, component string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: r.o.Namespace, Labels: map[string]string{ComponentLabel: component, "app.kubernetes.io/managed-by": "agentbox"}}
}

func ptr[T any](v T) *T { return &v }
