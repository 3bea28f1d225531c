package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	kjson "sigs.k8s.io/json"

	. "github.com/agentbox/agentbox/audit"
)

// KubeOptions says what the caller knows that Kubernetes manifests do not.
type KubeOptions struct {
	// PoliciesElsewhere vouches that NetworkPolicies restricting every
	// pod's egress are applied outside the input (another repository, a
	// cluster-wide policy engine). False: a pod that no NetworkPolicy of
	// the input restricts is network-policy-not-applied, unknown when the
	// input holds no NetworkPolicy at all.
	PoliciesElsewhere bool
	// SeccompRoot is a directory standing for the nodes' kubelet seccomp
	// root (/var/lib/kubelet/seccomp): a pod's Localhost seccomp profile
	// is read from it and compared with agentbox's. "" is the seccomp/
	// directory of a single directory target, as agentbox kube --profiles
	// files writes it, if there is one; else a Localhost profile that no
	// SeccompProfile of the input provides stays uncompared.
	SeccompRoot string
}

// kubeDoc is one YAML document of a manifest, with where it is written.
type kubeDoc struct {
	file string
	node *yaml.Node // the document's root mapping
	head kubeHead
}

// kubeHead is what every Kubernetes object starts with.
type kubeHead struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
}

// kubeInput is every object of the manifests that the audit reads.
type kubeInput struct {
	pods     []kubePod
	policies []kubePolicy
	// serviceAccounts maps namespace/name to automountServiceAccountToken.
	serviceAccounts map[string]*bool
	// seccompProfiles are the operator SeccompProfiles of the input, by
	// the Localhost path the operator installs each at.
	seccompProfiles map[string]kubeProfile
}

// kubePolicy is a NetworkPolicy of the input, or the managed policy of an
// agent-sandbox SandboxTemplate.
type kubePolicy struct {
	namespace string
	name      string
	spec      networkingv1.NetworkPolicySpec
	// only, when set, is the one pod template the policy applies to (a
	// SandboxTemplate's managed policy), whatever its podSelector says.
	only *kubeDoc
}

// kubePod is one pod template of a workload.
type kubePod struct {
	doc       *kubeDoc
	kind      string // Pod, Deployment, …
	name      string
	namespace string
	meta      podMeta
	spec      corev1.PodSpec
	specPath  []string // where the PodSpec is in the document
}

// podMeta is the part of a pod template's metadata the audit reads.
type podMeta struct {
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// LoadKube reads Kubernetes manifests (files, or directories of .yaml,
// .yml and .json files) and returns one model per container of every pod
// template they hold, in file order. Every object the audit reads is
// decoded strictly into its k8s.io/api type: an unknown field is an
// *InputError naming the file, the line and the field.
func LoadKube(paths []string, ko KubeOptions) ([]Container, error) {
	if ko.SeccompRoot == "" && len(paths) == 1 {
		// A directory agentbox kube wrote holds the nodes' seccomp root
		// as seccomp/ (a real directory, not a link).
		if fi, err := os.Lstat(filepath.Join(paths[0], "seccomp")); err == nil && fi.IsDir() {
			ko.SeccompRoot = filepath.Join(paths[0], "seccomp")
		}
	}
	docs, err := readKubeDocs(paths)
	if err != nil {
		return nil, err
	}
	in := kubeInput{serviceAccounts: map[string]*bool{}}
	for _, d := range docs {
		if err := in.add(d); err != nil {
			return nil, err
		}
	}
	if len(in.pods) == 0 {
		return nil, &InputError{File: paths[0], Err: errors.New("no workload found: want a Pod, Deployment, StatefulSet, DaemonSet, ReplicaSet, Job, CronJob, Sandbox or SandboxTemplate")}
	}
	var cs []Container
	for i := range in.pods {
		cs = append(cs, in.containers(&in.pods[i], ko)...)
	}
	return cs, nil
}

// readKubeDocs parses every file (a directory's manifests in name order)
// into its YAML documents, List items included.
func readKubeDocs(paths []string) ([]*kubeDoc, error) {
	var docs []*kubeDoc
	for _, p := range paths {
		files, err := KubeFiles(p)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			got, err := parseKubeFile(f)
			if err != nil {
				return nil, err
			}
			docs = append(docs, got...)
		}
	}
	return docs, nil
}

func parseKubeFile(path string) ([]*kubeDoc, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, &InputError{File: path, Err: err}
	}
	var docs []*kubeDoc
	dec := yaml.NewDecoder(bytes.NewReader(b))
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, &InputError{File: path, Line: yamlErrorLine(err.Error()), Err: fmt.Errorf("invalid YAML: %w", err)}
		}
		root := docRoot(&n)
		if root == nil || root.Kind == 0 || (root.Kind == yaml.ScalarNode && root.Tag == "!!null") {
			continue // an empty document (a leading or trailing ---)
		}
		got, err := splitList(path, root)
		if err != nil {
			return nil, err
		}
		docs = append(docs, got...)
	}
}

// splitList returns the document, or the items of a List.
func splitList(path string, root *yaml.Node) ([]*kubeDoc, error) {
	d := &kubeDoc{file: path, node: root}
	if err := d.decode(nil, &d.head, false); err != nil {
		return nil, err
	}
	if d.head.Kind == "" || d.head.APIVersion == "" {
		return nil, &InputError{File: path, Line: root.Line, Err: errors.New("not a Kubernetes object: apiVersion and kind are required")}
	}
	if d.head.Kind != "List" && !strings.HasSuffix(d.head.Kind, "List") {
		return []*kubeDoc{d}, nil
	}
	items := resolveAlias(lookupValue(root, "items"))
	if items == nil {
		return nil, nil
	}
	var out []*kubeDoc
	for _, it := range items.Content {
		got, err := splitList(path, resolveAlias(it))
		if err != nil {
			return nil, err
		}
		out = append(out, got...)
	}
	return out, nil
}

// node returns the YAML node at path below the document's root.
func (d *kubeDoc) at(path []string) *yaml.Node {
	n := d.node
	for _, p := range path {
		n = resolveAlias(lookupValue(n, p))
	}
	return n
}

// decode decodes the node at path into v, through JSON, as the API server
// would: with strict set, an unknown or duplicated field is an error naming
// its line.
func (d *kubeDoc) decode(path []string, v any, strict bool) error {
	n := d.at(path)
	if n == nil {
		return &InputError{File: d.file, Line: d.node.Line, Err: fmt.Errorf("%s: %s is missing", d.head.Kind, strings.Join(path, "."))}
	}
	var raw any
	if err := n.Decode(&raw); err != nil {
		line := n.Line
		if m := lineRE.FindStringSubmatch(err.Error()); m != nil { // the first line named is the offending one
			line, _ = strconv.Atoi(m[1])
		}
		return &InputError{File: d.file, Line: line, Err: fmt.Errorf("invalid YAML: %w", err)}
	}
	b, err := json.Marshal(jsonable(raw))
	if err != nil {
		return &InputError{File: d.file, Line: n.Line, Err: fmt.Errorf("%s: %w", strings.Join(path, "."), err)}
	}
	if !strict {
		if err := json.Unmarshal(b, v); err != nil {
			return d.fieldError(path, err)
		}
		return nil
	}
	serrs, err := kjson.UnmarshalStrict(b, v)
	if err != nil {
		return d.fieldError(path, err)
	}
	if len(serrs) > 0 {
		return d.fieldError(path, serrs[0])
	}
	return nil
}

// fieldError places a decoding error at the line of the field it names.
func (d *kubeDoc) fieldError(base []string, err error) error {
	field := ""
	var fe kjson.FieldError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &fe):
		field = fe.FieldPath()
	case errors.As(err, &te):
		field = te.Field
		err = fmt.Errorf("field %s: want %s, not a %s", te.Field, te.Type, te.Value)
	}
	line, full := d.node.Line, strings.Join(base, ".")
	if field != "" {
		if full != "" {
			full += "."
		}
		full += field
		if l := walkAny(d.at(base), splitFieldPath(field)); l > 0 {
			line = l
		}
	}
	msg := fmt.Errorf("%s %s: %w", d.head.Kind, d.head.Metadata.Name, err)
	if strings.Contains(err.Error(), "unknown field") {
		msg = fmt.Errorf("%s %s: unknown field %s: remove it or fix its spelling (see kubectl explain %s)", d.head.Kind, d.head.Metadata.Name, full, strings.ToLower(d.head.Kind))
	}
	return &InputError{File: d.file, Line: line, Err: msg}
}

// walkAny is walk for a path that may skip sequence indices (a JSON type
// error names spec.containers.ports.containerPort): at a sequence, the
// first element that holds the rest is followed.
func walkAny(n *yaml.Node, parts []string) int {
	n = resolveAlias(n)
	if n == nil || len(parts) == 0 {
		return 0
	}
	if n.Kind == yaml.SequenceNode {
		if i, err := strconv.Atoi(parts[0]); err == nil && i < len(n.Content) {
			if l := walkAny(n.Content[i], parts[1:]); l > 0 {
				return l
			}
			return n.Content[i].Line
		}
		for _, it := range n.Content {
			if l := walkAny(it, parts); l > 0 {
				return l
			}
		}
		return 0
	}
	k, v := lookup(n, parts[0])
	if k == nil {
		return 0
	}
	if l := walkAny(v, parts[1:]); l > 0 {
		return l
	}
	return k.Line
}

// splitFieldPath turns a JSON field path (spec.containers[0].foo) into
// the parts walk follows.
func splitFieldPath(p string) []string {
	p = strings.NewReplacer("[", ".", "]", "").Replace(p)
	return strings.FieldsFunc(p, func(r rune) bool { return r == '.' })
}

// jsonable turns what yaml.v3 decodes into values encoding/json accepts
// (map keys that are not strings).
func jsonable(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = jsonable(e)
		}
		return x
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[fmt.Sprint(k)] = jsonable(e)
		}
		return m
	case []any:
		for i, e := range x {
			x[i] = jsonable(e)
		}
		return x
	}
	return v
}

// podTemplatePaths says where each workload kind holds its pod template
// (its metadata and spec).
var podTemplatePaths = map[string][]string{
	"Pod":                   nil,
	"Deployment":            {"spec", "template"},
	"StatefulSet":           {"spec", "template"},
	"DaemonSet":             {"spec", "template"},
	"ReplicaSet":            {"spec", "template"},
	"ReplicationController": {"spec", "template"},
	"Job":                   {"spec", "template"},
	"CronJob":               {"spec", "jobTemplate", "spec", "template"},
	"PodTemplate":           {"template"},
	"Sandbox":               {"spec", "podTemplate"},
	"SandboxTemplate":       {"spec", "podTemplate"},
}

// add reads one object: a workload's pod template, a NetworkPolicy, a
// ServiceAccount; other kinds hold no pod and are skipped.
func (in *kubeInput) add(d *kubeDoc) error {
	ns := orDefault(d.head.Metadata.Namespace, "default")
	switch d.head.Kind {
	case "NetworkPolicy":
		var np networkingv1.NetworkPolicy
		if err := d.decode(nil, &np, true); err != nil {
			return err
		}
		in.policies = append(in.policies, kubePolicy{namespace: ns, name: np.Name, spec: np.Spec})
		return nil
	case "ServiceAccount":
		var sa corev1.ServiceAccount
		if err := d.decode(nil, &sa, true); err != nil {
			return err
		}
		in.serviceAccounts[ns+"/"+sa.Name] = sa.AutomountServiceAccountToken
		return nil
	case "SeccompProfile":
		if strings.HasPrefix(d.head.APIVersion, spoGroup) {
			return in.addSeccompProfile(d)
		}
		return nil
	}
	base, ok := podTemplatePaths[d.head.Kind]
	if !ok {
		return nil
	}
	if err := in.checkWorkload(d); err != nil {
		return err
	}
	p := kubePod{doc: d, kind: d.head.Kind, name: d.head.Metadata.Name, namespace: ns, specPath: join(base, "spec")}
	if d.at(join(base, "metadata")) != nil {
		if err := d.decode(join(base, "metadata"), &p.meta, false); err != nil {
			return err
		}
	}
	if err := d.decode(p.specPath, &p.spec, true); err != nil {
		return err
	}
	if d.head.Kind == "SandboxTemplate" {
		if err := in.sandboxPolicy(d, ns); err != nil {
			return err
		}
	}
	in.pods = append(in.pods, p)
	return nil
}

// join returns base with more appended, never sharing base's array.
func join(base []string, more ...string) []string {
	return append(append([]string(nil), base...), more...)
}

// builtinWorkloads are the k8s.io/api types of the built-in workload kinds,
// decoded whole and strictly so that a misspelled field anywhere in the
// object is an error, as the API server's field validation makes it.
var builtinWorkloads = map[string]func() any{
	"Pod":                   func() any { return &corev1.Pod{} },
	"PodTemplate":           func() any { return &corev1.PodTemplate{} },
	"ReplicationController": func() any { return &corev1.ReplicationController{} },
	"Deployment":            func() any { return &appsv1.Deployment{} },
	"StatefulSet":           func() any { return &appsv1.StatefulSet{} },
	"DaemonSet":             func() any { return &appsv1.DaemonSet{} },
	"ReplicaSet":            func() any { return &appsv1.ReplicaSet{} },
	"Job":                   func() any { return &batchv1.Job{} },
	"CronJob":               func() any { return &batchv1.CronJob{} },
}

// checkWorkload decodes a built-in workload whole, strictly. The
// agent-sandbox kinds have no Go types here: their pod template's spec is
// decoded strictly as a PodSpec, the rest as the fields the audit reads.
func (in *kubeInput) checkWorkload(d *kubeDoc) error {
	mk, ok := builtinWorkloads[d.head.Kind]
	if !ok {
		return nil
	}
	return d.decode(nil, mk(), true)
}
