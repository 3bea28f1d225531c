package kube

import (
	"fmt"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/agentbox/agentbox/apparmor"
	"github.com/agentbox/agentbox/policy"
	"github.com/agentbox/agentbox/seccomp/profiles"
)

// How the agent pod gets its seccomp and AppArmor profiles
// (Options.Profiles).
const (
	// ProfilesRuntime (the default) uses the node runtime's default
	// profiles: nothing is installed on the nodes, and the residual
	// seccomp-runtime-default says the profile is not agentbox's.
	ProfilesRuntime = "runtime"
	// ProfilesFiles writes agentbox's seccomp and AppArmor profiles as
	// files beside the manifest and renders a DaemonSet, in a namespace of
	// its own (SystemNamespace), that installs them on every node; the
	// agent pod names them as Localhost profiles.
	ProfilesFiles = "files"
	// ProfilesSPO renders the seccomp profile as a Security Profiles
	// Operator SeccompProfile, which the operator installs, and points the
	// agent pod at the operator's path for it.
	ProfilesSPO = "spo"
)

// Names of the profile installer (ProfilesFiles).
const (
	// SystemNamespace holds the installer: it needs hostPath volumes and
	// root, which Pod Security restricted (the agent's namespace) refuses.
	SystemNamespace = "agentbox-system"
	// InstallerName names the installer's DaemonSet, ConfigMap,
	// ServiceAccount and NetworkPolicy.
	InstallerName = "agentbox-profile-installer"
	// KubeletSeccompDir is agentbox's directory below the kubelet's
	// seccomp root (/var/lib/kubelet/seccomp), where the installer writes
	// the seccomp profiles; a Localhost profile is named relative to the
	// root, so the pod names SeccompDir + "/" + file.
	KubeletSeccompDir = "/var/lib/kubelet/seccomp/" + SeccompDir
	SeccompDir        = "agentbox"
	// SeccompFilesDir is where the output holds the seccomp profiles, laid
	// out as the node's kubelet seccomp root (SeccompFilesDir/agentbox/…):
	// the audit resolves the pod's Localhost profile in it.
	SeccompFilesDir = "seccomp"
	// AppArmorFilesDir is where the output holds the AppArmor profile.
	AppArmorFilesDir = "apparmor"
	// DefaultArch is the nodes' architecture when Options leaves it empty.
	DefaultArch = "amd64"
)

// Security Profiles Operator (sigs.k8s.io/security-profiles-operator
// v0.10.0, api/seccompprofile/v1beta1): SeccompProfile is cluster-scoped,
// and the operator writes it to the kubelet's seccomp root as
// operator/NAME.json (GetProfilePath: ProfilesRootPath/NAMESPACE/NAME.json,
// the namespace empty for a cluster-scoped object), the path
// status.localhostProfile reports.
const (
	spoAPIVersion = "security-profiles-operator.x-k8s.io/v1beta1"
	// SPOProfileDir is the operator's directory below the kubelet's
	// seccomp root.
	SPOProfileDir = "operator"
)

// SeccompProfile is the Security Profiles Operator's seccomp profile: the
// fields agentbox writes, as its v1beta1 SeccompProfileSpec declares them.
// The operator publishes a Go module, but its API package links
// controller-runtime, so the fields are declared here and checked against
// its CRD (kubeconform, and the CRD applied to the test API server).
type SeccompProfile struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              SeccompProfileSpec `json:"spec"`
}

// SeccompProfileSpec is the profile: an OCI seccomp profile less
// defaultErrnoRet, which the operator has no field for (the runtime's
// default errno for SCMP_ACT_ERRNO is EPERM, which is agentbox's).
type SeccompProfileSpec struct {
	DefaultAction specs.LinuxSeccompAction `json:"defaultAction"`
	Architectures []specs.Arch             `json:"architectures,omitempty"`
	Syscalls      []SeccompSyscall         `json:"syscalls,omitempty"`
}

// SeccompSyscall is one rule of a SeccompProfile.
type SeccompSyscall struct {
	Names    []string                 `json:"names"`
	Action   specs.LinuxSeccompAction `json:"action"`
	ErrnoRet uint                     `json:"errnoRet,omitempty"`
	Args     []SeccompArg             `json:"args,omitempty"`
}

// SeccompArg is a condition on a syscall argument.
type SeccompArg struct {
	Index    uint                       `json:"index"`
	Value    uint64                     `json:"value,omitempty"`
	ValueTwo uint64                     `json:"valueTwo,omitempty"`
	Op       specs.LinuxSeccompOperator `json:"op"`
}

// DeepCopyObject makes SeccompProfile a runtime.Object.
func (p *SeccompProfile) DeepCopyObject() runtime.Object { return deepCopy(p) }

// seccompArch is the seccomp architecture of Options.Arch.
func (r *renderer) seccompArch() specs.Arch {
	a, _ := profiles.ArchForGOARCH(r.o.Arch) // validated
	return a
}

// seccompFile is the name of agentbox's seccomp profile for the nodes'
// architecture, as seccomp/profiles generates it (agentbox-amd64.json).
func (r *renderer) seccompFile() string {
	return profiles.Default().FileName(r.seccompArch())
}

// SPOProfileName is the SeccompProfile's name for an architecture.
func SPOProfileName(goarch string) string { return "agentbox-" + goarch }

// profiles renders what the profile mode needs and returns the agent
// pod's seccomp and AppArmor profiles.
func (r *renderer) profiles() error {
	switch r.o.Profiles {
	case ProfilesRuntime:
		r.seccomp = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}
		r.out.Residuals = append(r.out.Residuals, policy.Residual{
			Code:   "seccomp-runtime-default",
			Reason: "the pods run under the node runtime's default seccomp and AppArmor profiles, not agentbox's own (--profiles files installs both on the nodes, --profiles spo the seccomp profile)",
		})
		return nil
	case ProfilesFiles:
		return r.profileFiles()
	}
	return r.spoProfiles()
}

// profileFiles writes agentbox's seccomp profiles (every architecture) and
// AppArmor profile as files, and the installer that puts them on the
// nodes; the agent pod names both as Localhost profiles.
func (r *renderer) profileFiles() error {
	r.out.Files = map[string][]byte{}
	data := map[string]string{}
	for _, a := range profiles.Arches() {
		p := profiles.Default()
		b, err := p.JSON(a)
		if err != nil {
			return err
		}
		name := p.FileName(a)
		r.out.Files[SeccompFilesDir+"/"+SeccompDir+"/"+name] = b
		data[name] = string(b)
	}
	aa, err := apparmor.Render(policy.AppArmorProfile)
	if err != nil {
		return err
	}
	r.out.Files[AppArmorFilesDir+"/"+policy.AppArmorProfile] = []byte(aa)
	data[policy.AppArmorProfile] = aa
	r.out.SeccompRoot = SeccompFilesDir
	r.seccomp = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeLocalhost, LocalhostProfile: ptr(SeccompDir + "/" + r.seccompFile())}
	r.appArmor = &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeLocalhost, LocalhostProfile: ptr(policy.AppArmorProfile)}
	r.installer(data)
	return nil
}

// spoProfiles renders agentbox's seccomp profile for the nodes'
// architecture as a SeccompProfile. The operator's AppArmorProfile
// (v1alpha1) takes only an abstract allowlist of executables, paths,
// protocols and capabilities, from which the operator generates a profile
// of its own: agentbox's deny rules (/proc and /sys writes, securityfs,
// mount, capabilities, ptrace and signals beyond the sandbox) have no
// form there, so the pod keeps the runtime's default AppArmor profile,
// with a residual.
func (r *renderer) spoProfiles() error {
	oci := profiles.Default().OCI(r.seccompArch())
	if oci.DefaultErrnoRet != nil && *oci.DefaultErrnoRet != 1 {
		return fmt.Errorf("the seccomp profile's default errno %d has no SeccompProfile field (the operator's default is EPERM)", *oci.DefaultErrnoRet)
	}
	spec := SeccompProfileSpec{DefaultAction: oci.DefaultAction, Architectures: oci.Architectures}
	for _, s := range oci.Syscalls {
		sc := SeccompSyscall{Names: s.Names, Action: s.Action}
		if s.ErrnoRet != nil {
			if *s.ErrnoRet == 0 {
				return fmt.Errorf("seccomp rule %v returns errno 0, which a SeccompProfile cannot say", s.Names)
			}
			sc.ErrnoRet = *s.ErrnoRet
		}
		for _, a := range s.Args {
			sc.Args = append(sc.Args, SeccompArg{Index: a.Index, Value: a.Value, ValueTwo: a.ValueTwo, Op: a.Op})
		}
		spec.Syscalls = append(spec.Syscalls, sc)
	}
	name := SPOProfileName(r.o.Arch)
	m := r.meta(name, "")
	m.Namespace = ""
	delete(m.Labels, ComponentLabel)
	m.Annotations = map[string]string{"description": "agentbox's seccomp profile (seccomp/profiles) for " + r.o.Arch + ": the allowlist agentbox run uses"}
	r.add(&SeccompProfile{TypeMeta: typeMeta(spoAPIVersion, "SeccompProfile"), ObjectMeta: m, Spec: spec})
	r.seccomp = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeLocalhost, LocalhostProfile: ptr(SPOProfileDir + "/" + name + ".json")}
	r.out.Residuals = append(r.out.Residuals, policy.Residual{
		Code:   "apparmor-runtime-default",
		Reason: "the Security Profiles Operator's AppArmorProfile takes an abstract allowlist, not a profile, so agentbox's AppArmor profile (its deny rules) cannot be carried by it: the agent runs under the runtime's default AppArmor profile (--profiles files installs agentbox's)",
	})
	r.out.Notes = append(r.out.Notes, "the Security Profiles Operator must be installed and running on the nodes; the agent pod does not start until the operator has written "+SPOProfileDir+"/"+name+".json (kubectl get seccompprofile "+name+")")
	return nil
}

// Installer resources: it copies a few files and loads one profile.
const (
	installerCPU    = "100m"
	installerMemory = "64Mi"
)

// installer renders the profile installer: its namespace (Pod Security
// privileged, as a hostPath needs), a ServiceAccount without a token, the
// profiles in a ConfigMap, a NetworkPolicy denying it every connection
// and the DaemonSet. The DaemonSet's pod runs two init containers, each
// holding only what its step needs, and then idles:
//
//   - seccomp: copies the seccomp profiles into KubeletSeccompDir, its
//     one hostPath, as root with no capability (the directory is root's);
//   - apparmor: loads the AppArmor profile with apparmor_parser, as root
//     with CAP_MAC_ADMIN alone, through the node's securityfs (its one
//     hostPath), unconfined by AppArmor (the runtime's profile forbids
//     writing securityfs, which is how a profile is loaded).
//
// Each finding this leaves is accepted for the installer's containers
// alone (Output.Installer), with its reason.
func (r *renderer) installer(data map[string]string) {
	labels := map[string]string{ComponentLabel: InstallerName, "app.kubernetes.io/managed-by": "agentbox"}
	meta := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: SystemNamespace, Labels: labels}
	}
	r.add(&corev1.Namespace{TypeMeta: typeMeta("v1", "Namespace"), ObjectMeta: metav1.ObjectMeta{Name: SystemNamespace, Labels: map[string]string{
		"pod-security.kubernetes.io/enforce":         "privileged",
		"pod-security.kubernetes.io/enforce-version": "latest",
	}}})
	r.add(&corev1.ServiceAccount{TypeMeta: typeMeta("v1", "ServiceAccount"), ObjectMeta: meta(InstallerName), AutomountServiceAccountToken: ptr(false)})
	r.add(&corev1.ConfigMap{TypeMeta: typeMeta("v1", "ConfigMap"), ObjectMeta: meta(InstallerName), Data: data})
	r.add(&networkingv1.NetworkPolicy{TypeMeta: typeMeta("networking.k8s.io/v1", "NetworkPolicy"), ObjectMeta: meta(InstallerName), Spec: networkingv1.NetworkPolicySpec{
		PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{ComponentLabel: InstallerName}},
		PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress},
	}})
	limits := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(installerCPU), corev1.ResourceMemory: resource.MustParse(installerMemory)}
	res := corev1.ResourceRequirements{Limits: limits, Requests: limits}
	root := func(add ...corev1.Capability) *corev1.SecurityContext {
		sc := hardened()
		sc.RunAsUser, sc.RunAsNonRoot = ptr(int64(0)), ptr(false)
		sc.Capabilities.Add = add
		return sc
	}
	var copies string
	for _, a := range profiles.Arches() {
		f := profiles.Default().FileName(a)
		// Separate commands, not an && list: set -e stops at any of them.
		copies += fmt.Sprintf("cp /profiles/%s /host-seccomp/.%s.new; mv -f /host-seccomp/.%s.new /host-seccomp/%s; ", f, f, f, f)
	}
	aaCtx := root("MAC_ADMIN")
	aaCtx.AppArmorProfile = &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeUnconfined}
	idle := hardened()
	idle.RunAsUser, idle.RunAsGroup, idle.RunAsNonRoot = ptr(int64(GatewayUID)), ptr(int64(GatewayUID)), ptr(true)
	profilesMount := corev1.VolumeMount{Name: "profiles", MountPath: "/profiles", ReadOnly: true}
	spec := corev1.PodSpec{
		ServiceAccountName:           InstallerName,
		AutomountServiceAccountToken: ptr(false),
		EnableServiceLinks:           ptr(false),
		SecurityContext:              &corev1.PodSecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
		// Every node that may run the agent, tainted or not.
		Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
		InitContainers: []corev1.Container{{
			Name: "seccomp", Image: r.o.InstallerImage, Command: []string{"/bin/sh", "-c", "set -eu; " + copies + "echo installed agentbox seccomp profiles in " + KubeletSeccompDir},
			SecurityContext: root(), Resources: res,
			VolumeMounts: []corev1.VolumeMount{profilesMount, {Name: "host-seccomp", MountPath: "/host-seccomp"}},
		}, {
			Name: "apparmor", Image: r.o.InstallerImage, Command: []string{"apparmor_parser", "--replace", "--skip-cache", "/profiles/" + policy.AppArmorProfile},
			SecurityContext: aaCtx, Resources: res,
			VolumeMounts: []corev1.VolumeMount{profilesMount, {Name: "securityfs", MountPath: "/sys/kernel/security"}},
		}},
		// The pod stays, so the DaemonSet installs the profiles once per
		// node (and again when one restarts): an idle container holding
		// nothing.
		Containers: []corev1.Container{{
			Name: "idle", Image: r.o.InstallerImage, Command: []string{"sleep", "infinity"},
			SecurityContext: idle, Resources: res,
		}},
		Volumes: []corev1.Volume{
			{Name: "profiles", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: InstallerName}}}},
			{Name: "host-seccomp", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: KubeletSeccompDir, Type: ptr(corev1.HostPathDirectoryOrCreate)}}},
			{Name: "securityfs", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/sys/kernel/security", Type: ptr(corev1.HostPathDirectory)}}},
		},
	}
	r.add(&appsv1.DaemonSet{TypeMeta: typeMeta("apps/v1", "DaemonSet"), ObjectMeta: meta(InstallerName), Spec: appsv1.DaemonSetSpec{
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{ComponentLabel: InstallerName}},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec},
	}})
	r.out.Installer = &Installer{
		Workload: "DaemonSet/" + InstallerName,
		PodSecurity: "the installer writes into the node's kubelet seccomp directory and loads an AppArmor profile through securityfs: two hostPath volumes, root and CAP_MAC_ADMIN, which only Pod Security privileged admits; it runs in " +
			SystemNamespace + ", apart from the restricted namespace of the agent",
		Accept: installerAccepts(),
	}
	r.out.Notes = append(r.out.Notes, "the profile installer's image ("+r.o.InstallerImage+") must have /bin/sh, cp, mv, sleep and apparmor_parser; the agent pod starts only on nodes where it has run (kubectl -n "+SystemNamespace+" rollout status ds/"+InstallerName+")")
}

// Installer is what the audit of the profile installer tolerates, for its
// containers alone.
type Installer struct {
	// Workload is the installer's Kind/name, the prefix of its containers'
	// names in the audit.
	Workload string
	// PodSecurity is why its pod is not Pod Security restricted.
	PodSecurity string
	// Accept are the installer's findings, each with its reason.
	Accept []policy.Acceptance
}

// installerAccepts are the findings the installer's containers have by
// design, each narrowed to the one path or step that has it.
func installerAccepts() []policy.Acceptance {
	return []policy.Acceptance{
		{Code: "system-directory-mounted", Subject: KubeletSeccompDir, Reason: "the seccomp init container writes agentbox's profiles into the kubelet's seccomp directory, agentbox's own subdirectory of it alone, as the kubelet requires for a Localhost profile"},
		{Code: "system-directory-mounted", Subject: "/sys/kernel/security", Reason: "the apparmor init container loads agentbox's AppArmor profile through securityfs, the only way a profile reaches the kernel"},
		{Code: "runs-as-root", Reason: "the init containers run as the node's root, with no capability but CAP_MAC_ADMIN for the AppArmor step: the kubelet's seccomp directory and securityfs are root's"},
		{Code: "capabilities-added", Subject: "CAP_MAC_ADMIN", Reason: "apparmor_parser needs CAP_MAC_ADMIN to load a profile; it is the apparmor init container's one capability"},
		{Code: "apparmor-unconfined", Reason: "the runtime's default AppArmor profile forbids writing securityfs, so the apparmor init container, which loads a profile, runs without one"},
	}
}
