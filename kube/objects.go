package kube

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"sort"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	"github.com/agentbox/agentbox/agents"
	"github.com/agentbox/agentbox/netpolicy"
	"github.com/agentbox/agentbox/policy"
)

// Component label values.
const (
	agentComponent   = "agentbox-agent"
	gatewayComponent = "agentbox-gateway"
)

// plannedEnv are plan variables the image, not the plan, defines in a pod
// (HOME is set from the plan's identity).
var plannedEnv = map[string]bool{"PATH": true, "HOME": true, "USER": true, "LOGNAME": true}

// hardened is the securityContext both containers get.
func hardened() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr(false),
		ReadOnlyRootFilesystem:   ptr(true),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
}

// podSecurity is the pod-level securityContext of both pods.
func podSecurity(uid, gid int64) *corev1.PodSecurityContext {
	return &corev1.PodSecurityContext{
		RunAsNonRoot: ptr(true), RunAsUser: ptr(uid), RunAsGroup: ptr(gid), FSGroup: ptr(gid),
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

// podSpec is what both pods share: no token, no service links, no host
// user ids, the hardened pod securityContext.
func podSpec(uid, gid int64) corev1.PodSpec {
	return corev1.PodSpec{
		ServiceAccountName:           ServiceAccount,
		AutomountServiceAccountToken: ptr(false),
		EnableServiceLinks:           ptr(false),
		HostUsers:                    ptr(false),
		SecurityContext:              podSecurity(uid, gid),
	}
}

// agentPod is the plan, translated: identity, limits, workspace, tmpfs
// mounts and environment.
func (r *renderer) agentPod() error {
	id := r.plan.Identity
	uid, gid := int64(id.UID), int64(id.GID)
	if uid == 0 {
		uid, gid = GatewayUID, GatewayUID // hostUsers: false maps it; still never uid 0 inside
	}
	spec := podSpec(uid, gid)
	spec.RestartPolicy = corev1.RestartPolicyNever
	spec.Hostname = r.plan.Hostname
	c := corev1.Container{
		Name: "agent", Image: r.o.Image, Command: r.launch.Argv, WorkingDir: r.plan.Cwd,
		Env: r.agentEnv(), SecurityContext: hardened(), Stdin: true, TTY: true,
	}
	limits, err := r.agentLimits()
	if err != nil {
		return err
	}
	c.Resources = corev1.ResourceRequirements{Limits: limits, Requests: limits}
	r.mounts(&spec, &c)
	spec.Containers = []corev1.Container{c}
	spec.SecurityContext.SeccompProfile, spec.SecurityContext.AppArmorProfile = r.seccomp, r.appArmor
	if r.o.Profiles != ProfilesRuntime {
		// The seccomp profile is one architecture's.
		spec.NodeSelector = map[string]string{"kubernetes.io/arch": r.o.Arch}
	}
	m := r.meta(AgentName, agentComponent)
	if r.workspaceVolume() != nil {
		// The workspace outlives the pod: it is declared, so that the
		// audit knows which writable volume is the workspace.
		m.Annotations = map[string]string{policy.WorkspaceLabel: workspaceVolume}
	}
	if r.o.Format == FormatAgentSandbox {
		r.agentSandbox(m, spec)
		return nil
	}
	if !r.o.Job {
		r.add(&corev1.Pod{TypeMeta: typeMeta("v1", "Pod"), ObjectMeta: m, Spec: spec})
		return nil
	}
	// One attempt: a sandbox that failed is looked at, not run again. No
	// one attaches to a Job's pod: no stdin, no terminal.
	spec.Containers[0].Stdin, spec.Containers[0].TTY = false, false
	r.add(&batchv1.Job{TypeMeta: typeMeta("batch/v1", "Job"), ObjectMeta: m, Spec: batchv1.JobSpec{
		BackoffLimit: ptr(int32(0)), Completions: ptr(int32(1)), Parallelism: ptr(int32(1)),
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: m.Labels, Annotations: m.Annotations}, Spec: spec},
	}})
	return nil
}

func (r *renderer) agentLimits() (corev1.ResourceList, error) {
	l := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(r.o.CPU)}
	if r.plan.Limits == nil || r.plan.Limits.MemoryBytes <= 0 {
		return nil, &InputError{Field: "limits", Msg: "the plan has no memory limit", Fix: "set limits.memory in the policy"}
	}
	l[corev1.ResourceMemory] = *resource.NewQuantity(r.plan.Limits.MemoryBytes, resource.BinarySI)
	if r.plan.Limits.Pids > 0 {
		r.out.Residuals = append(r.out.Residuals, policy.Residual{
			Code:   "pids-limit-kubelet",
			Reason: fmt.Sprintf("the plan's pids limit (%d) has no pod field: the node's kubelet --pod-max-pids bounds the pod", r.plan.Limits.Pids),
		})
	}
	return l, nil
}

// mounts gives the workspace an emptyDir (or its claim) and each plan tmpfs a
// memory-backed emptyDir with its size. The image is the root, so the
// plan's system, /etc, install and runtime mounts have no counterpart.
func (r *renderer) mounts(spec *corev1.PodSpec, c *corev1.Container) {
	n := 0
	for _, m := range r.plan.Mounts {
		var src corev1.VolumeSource
		switch m.Kind {
		case policy.KindWorkspace:
			src.EmptyDir = &corev1.EmptyDirVolumeSource{}
			if pvc := r.workspaceVolume(); pvc != nil {
				src = corev1.VolumeSource{PersistentVolumeClaim: pvc}
			}
		case policy.KindTmpfs:
			src.EmptyDir = &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: tmpfsSize(m.Options)}
		default:
			continue
		}
		name := workspaceVolume
		if m.Kind == policy.KindTmpfs {
			n++
			name = "tmpfs-" + strconv.Itoa(n)
		}
		spec.Volumes = append(spec.Volumes, corev1.Volume{Name: name, VolumeSource: src})
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: name, MountPath: m.Destination, ReadOnly: m.ReadOnly})
	}
}

// tmpfsSize reads a tmpfs size= option (bytes, or k/m/g suffixed).
func tmpfsSize(opts []string) *resource.Quantity {
	for _, o := range opts {
		v, ok := strings.CutPrefix(o, "size=")
		if !ok {
			continue
		}
		v = strings.NewReplacer("k", "Ki", "m", "Mi", "g", "Gi").Replace(strings.ToLower(v))
		if q, err := resource.ParseQuantity(v); err == nil {
			return &q
		}
	}
	return nil
}

// agentEnv is the plan's environment (less what the image defines), HOME,
// what the adapter sets to reach the gateway, and the gateway key.
func (r *renderer) agentEnv() []corev1.EnvVar {
	env := map[string]string{}
	for _, kv := range r.plan.Env {
		if k, v, _ := strings.Cut(kv, "="); !plannedEnv[k] {
			env[k] = v
		}
	}
	env["HOME"] = r.plan.Identity.Home
	for k, v := range r.launch.Env {
		env[k] = v
	}
	for _, k := range []string{"NO_PROXY", "no_proxy"} {
		if _, ok := r.launch.Env[k]; ok {
			env[k] = r.o.GatewayIP + "," + agents.NoProxy
		}
	}
	env[KeyEnv] = r.o.Token
	return sortedEnv(env)
}

func sortedEnv(m map[string]string) []corev1.EnvVar {
	out := make([]corev1.EnvVar, 0, len(m))
	for k, v := range m {
		out = append(out, corev1.EnvVar{Name: k, Value: v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// keyedRoutes are the routes whose real key the gateway reads from
// KeySecret: the built-in ones and every policy route naming a key.
func (r *renderer) keyedRoutes() []string {
	set := map[string]bool{}
	for _, n := range netpolicy.BuiltinRoutes() {
		set[n] = true
	}
	for n, u := range r.plan.Gateway.Upstreams {
		if u.KeyEnv != "" || u.KeyFile != "" {
			set[n] = true
		}
	}
	out := make([]string, 0, len(set))
	for n := range set {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// KeyName is the key of KeySecret that holds a route's real key.
func KeyName(route string) string { return route + "_api_key" }

// gateway renders its config, Service and Deployment.
func (r *renderer) gateway() error {
	cfg, err := r.gatewayConfig()
	if err != nil {
		return err
	}
	r.add(&corev1.ConfigMap{TypeMeta: typeMeta("v1", "ConfigMap"), ObjectMeta: r.meta(GatewayName, gatewayComponent), Data: map[string]string{"gateway.yaml": string(cfg)}})
	r.add(&corev1.Service{TypeMeta: typeMeta("v1", "Service"), ObjectMeta: r.meta(GatewayName, gatewayComponent), Spec: corev1.ServiceSpec{
		ClusterIP: r.o.GatewayIP, Selector: map[string]string{ComponentLabel: gatewayComponent},
		Ports: []corev1.ServicePort{{Name: "gateway", Protocol: corev1.ProtocolTCP, Port: GatewayPort, TargetPort: intstr.FromInt32(GatewayPort)}},
	}})
	r.add(r.gatewayDeployment())
	r.out.Routes = r.keyedRoutes()
	var lits []string
	for _, route := range r.out.Routes {
		lits = append(lits, "--from-literal="+KeyName(route)+"=KEY")
	}
	r.out.Notes = append(r.out.Notes, fmt.Sprintf("create the gateway's key Secret before applying (the gateway does not start without it): kubectl -n %s create secret generic %s %s (a route you do not use may hold an empty value)",
		r.o.Namespace, KeySecret, strings.Join(lits, " ")))
	return nil
}

func (r *renderer) gatewayConfig() ([]byte, error) {
	cfg := netpolicy.Config{RunID: "kube", Listen: fmt.Sprintf("tcp:0.0.0.0:%d", GatewayPort), TokenEnv: KeyEnv, LogFile: "/dev/stdout", Allow: r.plan.Network.Allow}
	cfg.Upstreams = map[string]netpolicy.Upstream{}
	for name, u := range r.plan.Gateway.Upstreams {
		if u.CAFile != "" {
			return nil, &InputError{Field: "gateway.upstreams." + name + ".ca_file", Msg: "a CA file on this host does not reach the gateway's pod", Fix: "drop ca_file, or put the CA into the gateway image"}
		}
		cfg.Upstreams[name] = netpolicy.Upstream{URL: u.URL, Auth: u.Auth, Models: u.Models}
	}
	for _, route := range r.keyedRoutes() {
		u := cfg.Upstreams[route]
		u.KeyFile = secretsDir + "/" + KeyName(route)
		cfg.Upstreams[route] = u
	}
	j, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	b, err := yaml.JSONToYAML(j)
	if err != nil {
		return nil, err
	}
	if _, err := netpolicy.ParseConfig("gateway.yaml", b); err != nil {
		return nil, fmt.Errorf("the rendered gateway config does not load: %w", err)
	}
	return b, nil
}

func (r *renderer) gatewayDeployment() *appsv1.Deployment {
	spec := podSpec(GatewayUID, GatewayUID)
	limits := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(gatewayCPU), corev1.ResourceMemory: resource.MustParse(gatewayMemory)}
	spec.Containers = []corev1.Container{{
		Name: "gateway", Image: r.o.GatewayImage,
		Command:         []string{"/agentbox", "gateway", "--config", gatewayConfig},
		Env:             []corev1.EnvVar{{Name: KeyEnv, Value: r.o.Token}},
		Ports:           []corev1.ContainerPort{{Name: "gateway", ContainerPort: GatewayPort, Protocol: corev1.ProtocolTCP}},
		SecurityContext: hardened(),
		Resources:       corev1.ResourceRequirements{Limits: limits, Requests: limits},
		VolumeMounts: []corev1.VolumeMount{
			{Name: "config", MountPath: gatewayConfigDir, ReadOnly: true},
			{Name: "keys", MountPath: secretsDir, ReadOnly: true},
		},
	}}
	spec.Volumes = []corev1.Volume{
		{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: GatewayName}}}},
		{Name: "keys", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: KeySecret, DefaultMode: ptr(int32(0o440))}}},
	}
	m := r.meta(GatewayName, gatewayComponent)
	return &appsv1.Deployment{TypeMeta: typeMeta("apps/v1", "Deployment"), ObjectMeta: m, Spec: appsv1.DeploymentSpec{
		Replicas: ptr(int32(1)),
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{ComponentLabel: gatewayComponent}},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: m.Labels}, Spec: spec},
	}}
}

// networkPolicies: the agent's only egress is the gateway's port; the
// gateway takes ingress from the agent alone and goes out only to DNS and
// the model routes' ports beyond the private ranges.
func (r *renderer) networkPolicies() error {
	tcp, udp := corev1.ProtocolTCP, corev1.ProtocolUDP
	sel := func(c string) metav1.LabelSelector {
		return metav1.LabelSelector{MatchLabels: map[string]string{ComponentLabel: c}}
	}
	port := func(p corev1.Protocol, n int) networkingv1.NetworkPolicyPort {
		return networkingv1.NetworkPolicyPort{Protocol: ptr(p), Port: ptr(intstr.FromInt(n))}
	}
	both := []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress}
	r.add(&networkingv1.NetworkPolicy{TypeMeta: typeMeta("networking.k8s.io/v1", "NetworkPolicy"), ObjectMeta: r.meta(AgentName+"-egress", agentComponent), Spec: networkingv1.NetworkPolicySpec{
		PodSelector: sel(agentComponent), PolicyTypes: both,
		Egress: agentEgress(),
	}})
	ports, err := r.outsidePorts()
	if err != nil {
		return err
	}
	var out []networkingv1.NetworkPolicyPort
	for _, p := range ports {
		out = append(out, port(tcp, p))
	}
	dns := networkingv1.NetworkPolicyPeer{
		NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "kube-system"}},
		PodSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"k8s-app": "kube-dns"}},
	}
	r.add(&networkingv1.NetworkPolicy{TypeMeta: typeMeta("networking.k8s.io/v1", "NetworkPolicy"), ObjectMeta: r.meta(GatewayName+"-egress", gatewayComponent), Spec: networkingv1.NetworkPolicySpec{
		PodSelector: sel(gatewayComponent), PolicyTypes: both,
		Ingress: []networkingv1.NetworkPolicyIngressRule{{
			From:  []networkingv1.NetworkPolicyPeer{{PodSelector: ptr(sel(agentComponent))}},
			Ports: []networkingv1.NetworkPolicyPort{port(tcp, GatewayPort)},
		}},
		Egress: []networkingv1.NetworkPolicyEgressRule{
			{To: []networkingv1.NetworkPolicyPeer{dns}, Ports: []networkingv1.NetworkPolicyPort{port(udp, 53), port(tcp, 53)}},
			{To: []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "0.0.0.0/0", Except: privateV4}}}, Ports: out},
		},
	}})
	r.out.Accept = append(r.out.Accept, policy.Acceptance{
		Code: "network-policy-not-applied", Subject: "egress of Deployment/" + GatewayName + " in namespace " + r.o.Namespace,
		Reason: "the gateway reaches the model routes' hosts: a NetworkPolicy names addresses, not hosts, so it opens the routes' ports to public addresses and the gateway's allowlist decides which hosts",
	})
	return nil
}

// agentEgress is the agent's one way out: the gateway's pods, its port.
func agentEgress() []networkingv1.NetworkPolicyEgressRule {
	return []networkingv1.NetworkPolicyEgressRule{{
		To:    []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{ComponentLabel: gatewayComponent}}}},
		Ports: []networkingv1.NetworkPolicyPort{{Protocol: ptr(corev1.ProtocolTCP), Port: ptr(intstr.FromInt(GatewayPort))}},
	}}
}

// privateV4 are the ranges the gateway's egress to the outside excludes:
// the cluster's, the VPC's and the link-local metadata endpoint.
var privateV4 = []string{"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "169.254.0.0/16"}

// outsidePorts are the TCP ports of the model routes and of network.allow.
func (r *renderer) outsidePorts() ([]int, error) {
	set := map[int]bool{443: true} // the built-in routes
	for name, u := range r.plan.Gateway.Upstreams {
		if u.URL == "" {
			continue
		}
		pu, err := url.Parse(u.URL)
		if err != nil {
			return nil, &InputError{Field: "gateway.upstreams." + name + ".url", Msg: err.Error()}
		}
		p, _ := strconv.Atoi(pu.Port())
		if p == 0 && pu.Scheme == "http" {
			p = 80
		} else if p == 0 {
			p = 443
		}
		set[p] = true
	}
	for _, a := range r.plan.Network.Allow {
		_, ps, err := net.SplitHostPort(a)
		if p, perr := strconv.Atoi(ps); err == nil && perr == nil {
			set[p] = true
		}
	}
	out := make([]int, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Ints(out)
	return out, nil
}

// manifest writes the objects as one YAML stream, in apply order.
func (r *renderer) manifest() error { return r.out.WriteManifest() }

// WriteManifest sets Manifest from Objects: one YAML stream, in their
// order (Render does it; a caller that changed an object does it again).
func (o *Output) WriteManifest() error {
	var buf bytes.Buffer
	buf.WriteString("# Written by agentbox kube: apply with kubectl apply -f " + ManifestFile + " after creating the Secret " + KeySecret + ".\n")
	for i, obj := range o.Objects {
		b, err := yaml.Marshal(obj)
		if err != nil {
			return err
		}
		if i > 0 {
			buf.WriteString("---\n")
		}
		buf.Write(b)
	}
	o.Manifest = buf.Bytes()
	return nil
}

// workspaceVolume names the workspace's volume in the agent pod.
const workspaceVolume = "workspace"

// workspaceVolume is the workspace's claim, or nil for an emptyDir.
func (r *renderer) workspaceVolume() *corev1.PersistentVolumeClaimVolumeSource {
	switch {
	case r.o.WorkspaceClaim != "":
		return &corev1.PersistentVolumeClaimVolumeSource{ClaimName: r.o.WorkspaceClaim}
	case r.o.WorkspaceSize != "" && r.o.Format == FormatAgentSandbox:
		// The controller's claim for the Sandbox (it puts the same
		// volume in the pod it creates).
		return &corev1.PersistentVolumeClaimVolumeSource{ClaimName: workspaceVolume + "-" + AgentName}
	case r.o.WorkspaceSize != "":
		return &corev1.PersistentVolumeClaimVolumeSource{ClaimName: WorkspaceClaimName}
	}
	return nil
}

// claimSpec is the workspace claim of --workspace-size: one node's
// read-write volume of the cluster's default storage class.
func (r *renderer) claimSpec() corev1.PersistentVolumeClaimSpec {
	return corev1.PersistentVolumeClaimSpec{
		AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(r.o.WorkspaceSize)}},
	}
}

// workspaceClaim renders the workspace's PersistentVolumeClaim when
// Options.WorkspaceSize asks for one (for agent-sandbox, the Sandbox's
// volume claim template is it: sandboxClaims).
func (r *renderer) workspaceClaim() error {
	if r.o.WorkspaceSize == "" || r.o.Format == FormatAgentSandbox {
		if r.o.WorkspaceClaim != "" {
			r.out.Notes = append(r.out.Notes, fmt.Sprintf("the workspace is the PersistentVolumeClaim %s, which must exist in namespace %s (the pod waits for it)", r.o.WorkspaceClaim, r.o.Namespace))
		}
		return nil
	}
	r.add(&corev1.PersistentVolumeClaim{TypeMeta: typeMeta("v1", "PersistentVolumeClaim"), ObjectMeta: r.meta(WorkspaceClaimName, agentComponent), Spec: r.claimSpec()})
	return nil
}
