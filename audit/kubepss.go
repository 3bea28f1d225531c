package audit

import (
	"fmt"
	"strings"
)

// PodSecurity is the verdict of the Pod Security Standards' own evaluator
// (k8s.io/pod-security-admission, the code behind the PodSecurity admission
// plugin) on one pod template, at the restricted level of the latest
// version: what a namespace labelled pod-security.kubernetes.io/enforce:
// restricted would admit.
type PodSecurity struct {
	Level   string `json:"level"`
	Version string `json:"version"`
	Allowed bool   `json:"allowed"`
	// Forbidden are the evaluator's reasons and details, one per failed
	// check, in its order.
	Forbidden []PodSecurityReason `json:"forbidden,omitempty"`
}

// PodSecurityReason is one check the pod fails.
type PodSecurityReason struct {
	Reason string `json:"reason"`
	Detail string `json:"detail,omitempty"`
}

// String is the report's pod_security line, without its key.
func (p *PodSecurity) String() string {
	head := fmt.Sprintf("%s (%s): ", p.Level, p.Version)
	if p.Allowed {
		return head + "allowed"
	}
	parts := make([]string, 0, len(p.Forbidden))
	for _, f := range p.Forbidden {
		s := f.Reason
		if f.Detail != "" {
			s += " (" + f.Detail + ")"
		}
		parts = append(parts, s)
	}
	return head + "forbidden: " + strings.Join(parts, "; ")
}

// kubeRefs names, for each finding code, the checks other Kubernetes tools
// run for the same fault: the Pod Security Standards check ids
// (k8s.io/pod-security-admission policy/check_*.go), kube-linter's check
// names (the docs/generated checks list), Polaris's (checks/*.yaml) and
// kubescape's control ids (regolibrary controls/). Only ids read in those
// sources are listed; a code with no counterpart in a tool names none.
var kubeRefs = map[string][]string{
	CodeContainerSocket:     {"pss:hostPathVolumes", "pss:restrictedVolumes", "kube-linter:docker-sock", "kube-linter:sensitive-host-mounts"},
	CodeHostRoot:            {"pss:hostPathVolumes", "pss:restrictedVolumes", "kube-linter:sensitive-host-mounts"},
	CodeHomeDirectory:       {"pss:hostPathVolumes", "pss:restrictedVolumes", "kube-linter:sensitive-host-mounts"},
	CodeSystemDirectory:     {"pss:hostPathVolumes", "pss:restrictedVolumes", "kube-linter:sensitive-host-mounts"},
	CodeExtraWritable:       {"pss:hostPathVolumes", "pss:restrictedVolumes"},
	CodeSecretInEnv:         {"kube-linter:env-var-secret", "kube-linter:read-secret-from-env-var", "polaris:sensitiveContainerEnvVar"},
	CodeHostNetwork:         {"pss:hostNamespaces", "kube-linter:host-network", "polaris:hostNetworkSet", "kubescape:C-0041"},
	CodeHostPID:             {"pss:hostNamespaces", "kube-linter:host-pid", "polaris:hostPIDSet", "kubescape:C-0038"},
	CodeHostIPC:             {"pss:hostNamespaces", "kube-linter:host-ipc", "polaris:hostIPCSet", "kubescape:C-0038"},
	CodeHostUTS:             {"pss:hostNamespaces", "kube-linter:host-network", "polaris:hostNetworkSet", "kubescape:C-0041"},
	CodePrivileged:          {"pss:privileged", "kube-linter:privileged-container", "polaris:runAsPrivileged", "kubescape:C-0057"},
	CodeCapsAdded:           {"pss:capabilities_baseline", "pss:capabilities_restricted", "polaris:dangerousCapabilities", "polaris:insecureCapabilities", "kubescape:C-0046"},
	CodeCapsNotDropped:      {"pss:capabilities_restricted", "kube-linter:drop-net-raw-capability", "polaris:insecureCapabilities", "kubescape:C-0046"},
	CodeNewPrivileges:       {"pss:allowPrivilegeEscalation", "kube-linter:privilege-escalation-container", "polaris:privilegeEscalationAllowed", "kubescape:C-0016"},
	CodeRunsAsRoot:          {"pss:runAsNonRoot", "pss:runAsUser", "kube-linter:run-as-non-root", "polaris:runAsRootAllowed", "kubescape:C-0013"},
	CodeWritableRoot:        {"kube-linter:no-read-only-root-fs", "polaris:notReadOnlyRootFilesystem", "kubescape:C-0017"},
	CodeSeccompUnconfined:   {"pss:seccompProfile_baseline", "pss:seccompProfile_restricted", "kubescape:C-0055"},
	CodeSeccompWeak:         {"kubescape:C-0055"},
	CodeAppArmor:            {"pss:appArmorProfile", "kubescape:C-0055"},
	CodeSELinux:             {"pss:seLinuxOptions", "kubescape:C-0055"},
	CodeProcMasks:           {"pss:procMount", "pss:procMount_restricted", "kube-linter:unsafe-proc-mount"},
	CodeSysctls:             {"pss:sysctls", "kube-linter:unsafe-sysctls"},
	CodeNoLimits:            {"kube-linter:unset-cpu-requirements", "kube-linter:unset-memory-requirements", "polaris:cpuLimitsMissing", "polaris:memoryLimitsMissing", "kubescape:C-0004", "kubescape:C-0050"},
	CodeNetworkPolicy:       {"kube-linter:non-isolated-pod", "kubescape:C-0030"},
	CodeServiceAccountToken: {"polaris:automountServiceAccountToken", "kubescape:C-0034"},
}

// KubeRefs returns the other tools' ids for a finding code (see kubeRefs).
func KubeRefs(code string) []string { return append([]string(nil), kubeRefs[code]...) }

// kubeFixes are the fixes in a manifest's own terms, where the catalog's
// speak of compose and docker flags.
var kubeFixes = map[string]string{
	CodeContainerSocket:   "remove the hostPath volume (and any DOCKER_HOST); give the agent no engine",
	CodeHostRoot:          "remove the hostPath volume of /",
	CodeHomeDirectory:     "remove the hostPath volume; put what the agent needs into the image or an emptyDir",
	CodeSystemDirectory:   "remove the hostPath volume; use a configMap for the one file needed",
	CodeExtraWritable:     "mount it readOnly: true, or use an emptyDir",
	CodeSecretInEnv:       "remove the variable (and the secretKeyRef/envFrom); mount the key into the agentbox gateway only",
	CodeHostNetwork:       "remove hostNetwork: true",
	CodeNetworkPolicy:     "add a NetworkPolicy selecting the pod with policyTypes [Egress] whose only egress is the gateway's pods and port (agentbox kube writes one)",
	CodeRunsAsRoot:        "set securityContext.runAsNonRoot: true and runAsUser: 65532, or hostUsers: false",
	CodePrivileged:        "remove securityContext.privileged: true",
	CodeWritableRoot:      "set securityContext.readOnlyRootFilesystem: true; mount an emptyDir where writes are needed",
	CodeCapsAdded:         "remove securityContext.capabilities.add",
	CodeCapsNotDropped:    "set securityContext.capabilities.drop: [ALL]",
	CodeNewPrivileges:     "set securityContext.allowPrivilegeEscalation: false",
	CodeNoLimits:          "set resources.limits.memory and resources.limits.cpu",
	CodeSeccompUnconfined: "set securityContext.seccompProfile.type: RuntimeDefault (or Localhost with agentbox's profile)",
	CodeAppArmor:          "set securityContext.appArmorProfile.type: RuntimeDefault (or Localhost)",
	CodeSELinux:           "remove seLinuxOptions.type spc_t/unconfined_t",
	CodeProcMasks:         "remove securityContext.procMount: Unmasked",
	CodeHostPID:           "remove hostPID: true",
	CodeHostIPC:           "remove hostIPC: true",
	CodeHostUTS:           "remove hostNetwork: true (it shares the node's UTS namespace too)",
	CodeNoUserNS:          "set hostUsers: false (user namespaces, stable since Kubernetes 1.36)",
	CodeSysctls:           "remove securityContext.sysctls unless each one is justified",
}

// kubeSubjects respell the subjects the checks write in compose's terms.
var kubeSubjects = map[string]string{
	"network_mode: host": "hostNetwork: true",
	"uts: host":          "hostNetwork: true (UTS)",
	"pid: host":          "hostPID: true",
	"ipc: host":          "hostIPC: true",
	"no-new-privileges":  "allowPrivilegeEscalation",
	"read_only":          "readOnlyRootFilesystem",
}

// kubeLines are the manifest fields that findings sharing one compose key
// (security_opt) point at, each its own line.
var kubeLines = map[string]string{
	CodeNewPrivileges:     "allowPrivilegeEscalation",
	CodeSeccompUnconfined: "seccompProfile",
	CodeSeccompWeak:       "seccompProfile",
	CodeAppArmor:          "appArmorProfile",
	CodeSELinux:           "seLinuxOptions",
	CodeProcMasks:         "procMount",
}

// kubeFindings puts the findings of a model read from a Kubernetes
// manifest in its terms (subject, fix, the line of the field) and names
// the other tools' ids. It runs before acceptance, so an acceptance names
// the subject printed.
func kubeFindings(c *Container, fs []Finding) {
	if c.Source != SourceKube {
		return
	}
	for i := range fs {
		fs[i].Also = KubeRefs(fs[i].Code)
		if l, ok := c.KeyLines[kubeLines[fs[i].Code]]; ok {
			fs[i].Location = l
		}
		if fix, ok := kubeFixes[fs[i].Code]; ok {
			fs[i].Fix = fix
		}
		if s, ok := kubeSubjects[fs[i].Subject]; ok {
			fs[i].Subject = s
		}
		if fs[i].Code == CodeNetworkPolicy && c.NetworkMode != "host" && len(c.Networks) == 1 {
			fs[i].Detail = c.Networks[0].Why // what the input's NetworkPolicies say of the pod
		}
	}
}

// checkServiceAccountToken reports a pod whose service-account token the
// kubelet mounts: the agent then holds a credential for the API server.
func checkServiceAccountToken(c *Container, o *Options) []Finding {
	if c.ServiceAccountToken == "" || c.ServiceAccountToken == No {
		return nil
	}
	f := newFinding(CodeServiceAccountToken, "automountServiceAccountToken", c.ServiceAccountWhy, c.keyLocation("service_account"))
	f.Unknown = c.ServiceAccountToken == Unknown
	f.Evidence = "service_account_token=" + string(c.ServiceAccountToken)
	return []Finding{f}
}
