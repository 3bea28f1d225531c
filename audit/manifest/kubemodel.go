package manifest

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
	corev1 "k8s.io/api/core/v1"

	. "github.com/agentbox/agentbox/audit"
	"github.com/agentbox/agentbox/policy"
)

// kubeCtx is one container of one pod template being normalised.
type kubeCtx struct {
	pod   *kubePod
	spec  *corev1.PodSpec
	ctr   *corev1.Container
	node  *yaml.Node // the container's mapping
	pnode *yaml.Node // the pod spec's mapping
	in    *kubeInput
	ko    KubeOptions
}

// containers normalises every init and regular container of a pod
// template; each carries the pod's Pod Security verdict.
func (in *kubeInput) containers(p *kubePod, ko KubeOptions) []Container {
	verdict := EvaluatePodSecurity(p.meta.Labels, p.meta.Annotations, &p.spec)
	net := in.egress(p, ko)
	sa, saWhy := in.serviceAccountToken(p)
	var out []Container
	for _, list := range []struct {
		key  string
		ctrs []corev1.Container
	}{{"initContainers", p.spec.InitContainers}, {"containers", p.spec.Containers}} {
		items := resolveAlias(lookupValue(p.doc.at(p.specPath), list.key))
		for i := range list.ctrs {
			k := kubeCtx{pod: p, spec: &p.spec, ctr: &list.ctrs[i], pnode: p.doc.at(p.specPath), in: in, ko: ko}
			if items != nil && i < len(items.Content) {
				k.node = resolveAlias(items.Content[i])
			}
			c := k.model()
			c.Networks = []Network{net}
			c.ServiceAccountToken, c.ServiceAccountWhy = sa, saWhy
			if k.mountsToken() {
				c.ServiceAccountToken, c.ServiceAccountWhy = Yes, "a projected serviceAccountToken volume is mounted"
			}
			c.PodSecurity = verdict
			out = append(out, c)
		}
	}
	return out
}

// model is the container in the audit's model.
func (k *kubeCtx) model() Container {
	p, ctr := k.pod, k.ctr
	c := Container{
		Name:   p.kind + "/" + p.name + "/" + ctr.Name,
		Source: SourceKube, Image: ctr.Image, File: p.doc.file, Line: k.line(k.node),
		Entrypoint: ctr.Command, Command: ctr.Args, WorkingDir: ctr.WorkingDir,
		ProcMounted: true, CapsKnown: true, NetworkMode: "pod",
	}
	if k.spec.HostNetwork {
		c.NetworkMode, c.UTSMode = "host", "host"
	}
	if k.spec.HostPID {
		c.PidMode = "host"
	}
	if k.spec.HostIPC {
		c.IpcMode = "host"
	}
	c.UserNS = No
	if k.spec.HostUsers != nil && !*k.spec.HostUsers {
		c.UserNS = Yes
	}
	k.security(&c)
	k.limits(&c)
	c.Mounts = k.mounts()
	c.Env = k.env()
	c.KeyLines = k.keyLines()
	return c
}

func (k *kubeCtx) line(n *yaml.Node) int {
	if n == nil {
		return k.pod.doc.node.Line
	}
	return n.Line
}

// security reads the container's securityContext over the pod's.
func (k *kubeCtx) security(c *Container) {
	sc := k.ctr.SecurityContext
	if sc == nil {
		sc = &corev1.SecurityContext{}
	}
	psc := k.spec.SecurityContext
	if psc == nil {
		psc = &corev1.PodSecurityContext{}
	}
	c.Privileged = sc.Privileged != nil && *sc.Privileged
	if sc.Capabilities != nil {
		for _, x := range sc.Capabilities.Add {
			c.CapAdd = append(c.CapAdd, NormalizeCap(string(x)))
		}
		for _, x := range sc.Capabilities.Drop {
			c.CapDrop = append(c.CapDrop, NormalizeCap(string(x)))
		}
	}
	c.Caps = EffectiveCaps(DefaultCaps, c.CapAdd, c.CapDrop, c.Privileged)
	c.NoNewPrivileges = No
	if sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation && !c.Privileged {
		c.NoNewPrivileges = Yes
	}
	c.ReadOnlyRoot = sc.ReadOnlyRootFilesystem != nil && *sc.ReadOnlyRootFilesystem
	c.User = kubeUser(first(sc.RunAsUser, psc.RunAsUser), first(sc.RunAsGroup, psc.RunAsGroup), firstBool(sc.RunAsNonRoot, psc.RunAsNonRoot))
	c.Seccomp = kubeSeccomp(sc.SeccompProfile, psc.SeccompProfile)
	if lp, ok := strings.CutPrefix(c.Seccomp.Profile, "Localhost "); ok && c.Seccomp.Mode == "custom" {
		k.in.localhostSeccomp(&c.Seccomp, lp, c.CapAdd, k.ko)
	}
	c.AppArmor = kubeAppArmor(sc.AppArmorProfile, psc.AppArmorProfile, k.pod.meta.Annotations["container.apparmor.security.beta.kubernetes.io/"+k.ctr.Name])
	if o := sc.SELinuxOptions; o != nil && o.Type != "" {
		c.SELinux = []string{"type:" + o.Type}
	} else if o := psc.SELinuxOptions; o != nil && o.Type != "" {
		c.SELinux = []string{"type:" + o.Type}
	}
	if sc.ProcMount != nil && *sc.ProcMount == corev1.UnmaskedProcMount {
		c.SystemPaths = "unconfined"
	}
	for _, s := range psc.Sysctls {
		if c.Sysctls == nil {
			c.Sysctls = map[string]string{}
		}
		c.Sysctls[s.Name] = s.Value
	}
}

func first(a, b *int64) *int64 {
	if a != nil {
		return a
	}
	return b
}

func firstBool(a, b *bool) bool {
	if a != nil {
		return *a
	}
	return b != nil && *b
}

// kubeUser spells the container's user as the model does: the uid (and
// gid), or "(runAsNonRoot)" when only the kubelet's refusal to start uid
// 0 is known, or "" for the image's default.
func kubeUser(uid, gid *int64, nonRoot bool) string {
	switch {
	case uid != nil && gid != nil:
		return fmt.Sprintf("%d:%d", *uid, *gid)
	case uid != nil:
		return fmt.Sprint(*uid)
	case nonRoot:
		return "(runAsNonRoot)"
	}
	return ""
}

// kubeSeccomp reads seccompProfile, the container's over the pod's. Unset
// is the kubelet's default, Unconfined unless the node runs with
// --seccomp-default, which a manifest cannot show.
func kubeSeccomp(ctr, pod *corev1.SeccompProfile) Seccomp {
	p := ctr
	if p == nil {
		p = pod
	}
	if p == nil {
		return Seccomp{Mode: "unconfined", Profile: "unset"}
	}
	switch p.Type {
	case corev1.SeccompProfileTypeRuntimeDefault:
		return Seccomp{Mode: "default", Profile: "RuntimeDefault"}
	case corev1.SeccompProfileTypeLocalhost:
		lp := ""
		if p.LocalhostProfile != nil {
			lp = *p.LocalhostProfile
		}
		return Seccomp{Mode: "custom", Profile: "Localhost " + lp}
	case corev1.SeccompProfileTypeUnconfined:
		return Seccomp{Mode: "unconfined", Profile: string(p.Type)}
	}
	return Seccomp{Mode: "unknown", Profile: string(p.Type)} // a type this audit does not know
}

// kubeAppArmor reads appArmorProfile (container over pod) or the
// deprecated annotation.
func kubeAppArmor(ctr, pod *corev1.AppArmorProfile, annotation string) string {
	p := ctr
	if p == nil {
		p = pod
	}
	if p == nil {
		if annotation == "unconfined" {
			return "unconfined"
		}
		return annotation
	}
	switch p.Type {
	case corev1.AppArmorProfileTypeUnconfined:
		return "unconfined"
	case corev1.AppArmorProfileTypeLocalhost:
		if p.LocalhostProfile != nil {
			return "localhost/" + *p.LocalhostProfile
		}
	case corev1.AppArmorProfileTypeRuntimeDefault:
	}
	return "runtime/default"
}

// limits reads resources.limits. Kubernetes has no per-container pids
// limit: that is the kubelet's podPidsLimit (checkLimits).
func (k *kubeCtx) limits(c *Container) {
	l := k.ctr.Resources.Limits
	if m, ok := l[corev1.ResourceMemory]; ok {
		c.MemoryLimit = m.Value()
	}
	if cpu, ok := l[corev1.ResourceCPU]; ok {
		c.CPULimit = float64(cpu.MilliValue()) / 1000
	}
}

// mounts are the container's volumeMounts, each as what its volume is: a
// hostPath is a bind of the node's path; emptyDir, configMap, secret,
// projected and downwardAPI volumes live and die with the pod; a PVC, an
// ephemeral or CSI volume persists like a named volume.
func (k *kubeCtx) mounts() []Mount {
	vols := map[string]int{}
	for i, v := range k.spec.Volumes {
		vols[v.Name] = i
	}
	vnodes := resolveAlias(lookupValue(k.pnode, "volumes"))
	mnodes := resolveAlias(lookupValue(k.node, "volumeMounts"))
	var out []Mount
	for i, vm := range k.ctr.VolumeMounts {
		m := Mount{Type: "volume", Source: vm.Name, Destination: vm.MountPath, ReadOnly: vm.ReadOnly}
		m.Location = Location{File: k.pod.doc.file, Line: k.line(item(mnodes, i))}
		if vi, ok := vols[vm.Name]; ok {
			kubeVolume(&m, k.spec.Volumes[vi])
			if v := k.spec.Volumes[vi]; v.PersistentVolumeClaim != nil && k.pod.meta.Annotations[policy.WorkspaceLabel] == v.Name {
				// The declared workspace: it is the one writable volume
				// meant to outlive the pod.
				m.Type, m.Source = "workspace", "PersistentVolumeClaim "+v.PersistentVolumeClaim.ClaimName
			}
			if hp := lookupValue(lookupValue(item(vnodes, vi), "hostPath"), "path"); hp != nil {
				m.Line = hp.Line
			}
		}
		if vm.SubPath != "" && m.Type == "bind" {
			m.Source = strings.TrimSuffix(m.Source, "/") + "/" + vm.SubPath
		}
		out = append(out, m)
	}
	return out
}

func kubeVolume(m *Mount, v corev1.Volume) {
	switch {
	case v.HostPath != nil:
		m.Type, m.Source = "bind", v.HostPath.Path
	case v.EmptyDir != nil && v.EmptyDir.Medium == corev1.StorageMediumMemory:
		m.Type = "tmpfs"
	case v.EmptyDir != nil:
		m.Type = "emptyDir"
	case v.ConfigMap != nil, v.Secret != nil, v.Projected != nil, v.DownwardAPI != nil:
		m.Type, m.ReadOnly = kubeVolumeType(v), true // the kubelet mounts these read-only
	}
}

func kubeVolumeType(v corev1.Volume) string {
	switch {
	case v.ConfigMap != nil:
		return "configMap"
	case v.Secret != nil:
		return "secret"
	case v.Projected != nil:
		return "projected"
	}
	return "downwardAPI"
}

// item is the i-th element of a sequence node, or nil.
func item(seq *yaml.Node, i int) *yaml.Node {
	if seq == nil || seq.Kind != yaml.SequenceNode || i >= len(seq.Content) {
		return nil
	}
	return resolveAlias(seq.Content[i])
}

// env reads env and envFrom. A value from a Secret is the secret in the
// environment whatever the variable is called; envFrom a Secret puts every
// key of it there.
func (k *kubeCtx) env() []EnvVar {
	enodes := resolveAlias(lookupValue(k.node, "env"))
	var out []EnvVar
	for i, e := range k.ctr.Env {
		v := EnvVar{Name: e.Name, Value: e.Value, Location: Location{File: k.pod.doc.file, Line: k.line(item(enodes, i))}}
		if f := e.ValueFrom; f != nil {
			switch {
			case f.SecretKeyRef != nil:
				v.FromSecret, v.From = true, "Secret "+f.SecretKeyRef.Name+" key "+f.SecretKeyRef.Key
			case f.ConfigMapKeyRef != nil:
				v.From = "ConfigMap " + f.ConfigMapKeyRef.Name + " key " + f.ConfigMapKeyRef.Key
			}
		}
		out = append(out, v)
	}
	fnodes := resolveAlias(lookupValue(k.node, "envFrom"))
	for i, e := range k.ctr.EnvFrom {
		if e.SecretRef == nil {
			continue
		}
		name := "envFrom Secret " + e.SecretRef.Name
		if e.Prefix != "" {
			name += " (prefix " + e.Prefix + ")"
		}
		out = append(out, EnvVar{
			Name: name, FromSecret: true, From: "every key of Secret " + e.SecretRef.Name,
			Location: Location{File: k.pod.doc.file, Line: k.line(item(fnodes, i))},
		})
	}
	return out
}

// mountsToken reports whether the container mounts a projected volume
// holding a service-account token.
func (k *kubeCtx) mountsToken() bool {
	for _, vm := range k.ctr.VolumeMounts {
		for _, v := range k.spec.Volumes {
			if v.Name != vm.Name || v.Projected == nil {
				continue
			}
			for _, s := range v.Projected.Sources {
				if s.ServiceAccountToken != nil {
					return true
				}
			}
		}
	}
	return false
}

// serviceAccountToken says whether the kubelet mounts the pod's
// service-account token: the pod's automountServiceAccountToken, else its
// ServiceAccount's when the input holds it, else unknown.
func (in *kubeInput) serviceAccountToken(p *kubePod) (Tri, string) {
	if a := p.spec.AutomountServiceAccountToken; a != nil {
		if *a {
			return Yes, "automountServiceAccountToken: true"
		}
		return No, "automountServiceAccountToken: false"
	}
	sa := orDefault(p.spec.ServiceAccountName, "default")
	a, ok := in.serviceAccounts[p.namespace+"/"+sa]
	switch {
	case !ok:
		return Unknown, "the pod leaves automountServiceAccountToken to ServiceAccount " + sa + ", which is not in the input"
	case a != nil && !*a:
		return No, "ServiceAccount " + sa + " sets automountServiceAccountToken: false"
	}
	return Yes, "neither the pod nor ServiceAccount " + sa + " sets automountServiceAccountToken: false"
}

// keyLines maps the model's keys to where the manifest sets them.
func (k *kubeCtx) keyLines() map[string]Location {
	sc := lookupValue(k.node, "securityContext")
	psc := lookupValue(k.pnode, "securityContext")
	caps := lookupValue(sc, "capabilities")
	at := func(cands ...*yaml.Node) Location {
		for _, n := range cands {
			if n = resolveAlias(n); n != nil {
				return Location{File: k.pod.doc.file, Line: n.Line}
			}
		}
		return Location{File: k.pod.doc.file, Line: k.line(k.node)}
	}
	key := func(m *yaml.Node, name string) *yaml.Node {
		kn, _ := lookup(m, name)
		return kn
	}
	return map[string]Location{
		"privileged":               at(key(sc, "privileged"), sc),
		"cap_add":                  at(key(caps, "add"), caps, sc),
		"cap_drop":                 at(key(caps, "drop"), caps, sc),
		"network_mode":             at(key(k.pnode, "hostNetwork")),
		"uts":                      at(key(k.pnode, "hostNetwork")),
		"pid":                      at(key(k.pnode, "hostPID")),
		"ipc":                      at(key(k.pnode, "hostIPC")),
		"user":                     at(key(sc, "runAsUser"), key(psc, "runAsUser"), key(sc, "runAsNonRoot"), key(psc, "runAsNonRoot"), sc),
		"userns_mode":              at(key(k.pnode, "hostUsers")),
		"read_only":                at(key(sc, "readOnlyRootFilesystem"), sc),
		"security_opt":             at(key(sc, "seccompProfile"), key(psc, "seccompProfile"), key(sc, "allowPrivilegeEscalation"), sc, psc),
		"allowPrivilegeEscalation": at(key(sc, "allowPrivilegeEscalation"), sc),
		"seccompProfile":           at(key(sc, "seccompProfile"), key(psc, "seccompProfile"), sc, psc),
		"appArmorProfile":          at(key(sc, "appArmorProfile"), key(psc, "appArmorProfile"), key(lookupValue(k.pod.doc.at(k.pod.specPath[:len(k.pod.specPath)-1]), "metadata"), "annotations"), sc, psc),
		"seLinuxOptions":           at(key(sc, "seLinuxOptions"), key(psc, "seLinuxOptions"), sc, psc),
		"procMount":                at(key(sc, "procMount"), sc),
		"mem_limit":                at(key(lookupValue(k.node, "resources"), "limits"), key(k.node, "resources")),
		"command":                  at(key(k.node, "command"), key(k.node, "args")),
		"environment":              at(key(k.node, "env"), key(k.node, "envFrom")),
		"volumes":                  at(key(k.node, "volumeMounts")),
		"sysctls":                  at(key(psc, "sysctls"), psc),
		"service_account":          at(key(k.pnode, "automountServiceAccountToken"), key(k.pnode, "serviceAccountName")),
		"networks":                 at(k.pnode),
	}
}
