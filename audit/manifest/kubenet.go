package manifest

import (
	"fmt"
	"net/netip"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	. "github.com/agentbox/agentbox/audit"
)

// inClusterRanges are the address ranges a pod network, a service network
// or a VPC uses (RFC 1918, RFC 6598 shared space, IPv6 unique local). An
// ipBlock wholly inside them keeps egress inside; one that reaches beyond
// them reaches the internet or a link-local endpoint such as the cloud
// metadata service.
var inClusterRanges = []netip.Prefix{
	netip.MustParsePrefix("10.0.0.0/8"),
	netip.MustParsePrefix("172.16.0.0/12"),
	netip.MustParsePrefix("192.168.0.0/16"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("fc00::/7"),
}

// egress says whether the input's NetworkPolicies keep the pod's egress
// inside the cluster, as the model's one network.
func (in *kubeInput) egress(p *kubePod, ko KubeOptions) Network {
	n := Network{Name: "egress of " + p.kind + "/" + p.name + " in namespace " + p.namespace}
	var names []string
	for _, np := range in.policies {
		if !np.selects(p) || !restrictsEgress(np.spec) {
			continue
		}
		names = append(names, np.name)
		for _, r := range np.spec.Egress {
			if open := openEgress(r); open != "" {
				n.Internal, n.Why = No, fmt.Sprintf("NetworkPolicy %s allows egress to %s", np.name, open)
				return n
			}
		}
	}
	switch {
	case len(names) > 0:
		n.Internal, n.Why = Yes, "egress is limited to in-cluster peers by NetworkPolicy "+strings.Join(names, ", ")
	case ko.PoliciesElsewhere:
		n.Internal, n.Why = Yes, "the caller vouches that NetworkPolicies applied outside the input restrict it (--policies-elsewhere)"
	case len(in.policies) == 0:
		n.Internal, n.Why = Unknown, "the input holds no NetworkPolicy; add one that limits the pod's egress, or pass --policies-elsewhere if they are applied from elsewhere"
	default:
		n.Internal, n.Why = No, "no NetworkPolicy of the input restricts this pod's egress, so it reaches any address"
	}
	return n
}

// selects reports whether the policy applies to the pod.
func (np kubePolicy) selects(p *kubePod) bool {
	if np.only != nil {
		return np.only == p.doc
	}
	if np.namespace != p.namespace {
		return false
	}
	sel, err := metav1.LabelSelectorAsSelector(&np.spec.PodSelector)
	return err == nil && sel.Matches(labels.Set(p.meta.Labels))
}

// restrictsEgress reports whether a policy governs egress: it names Egress
// in policyTypes, or it has none and has egress rules (the API's default).
func restrictsEgress(s networkingv1.NetworkPolicySpec) bool {
	if len(s.PolicyTypes) == 0 {
		return len(s.Egress) > 0
	}
	for _, t := range s.PolicyTypes {
		if t == networkingv1.PolicyTypeEgress {
			return true
		}
	}
	return false
}

// openEgress describes what an egress rule lets out beyond the cluster:
// every address (no peers), or an ipBlock reaching outside
// inClusterRanges; "" when the rule names only in-cluster peers.
func openEgress(r networkingv1.NetworkPolicyEgressRule) string {
	ports := rulePorts(r.Ports)
	if len(r.To) == 0 {
		return "every address" + ports
	}
	for _, peer := range r.To {
		if b := peer.IPBlock; b != nil && !insideCluster(b.CIDR) {
			return b.CIDR + ports
		}
	}
	return ""
}

func rulePorts(ps []networkingv1.NetworkPolicyPort) string {
	if len(ps) == 0 {
		return " on every port"
	}
	var out []string
	for _, p := range ps {
		s := "any"
		if p.Port != nil {
			s = p.Port.String()
		}
		if p.Protocol != nil {
			s += "/" + string(*p.Protocol)
		}
		out = append(out, s)
	}
	return " on port " + strings.Join(out, ", ")
}

func insideCluster(cidr string) bool {
	p, err := netip.ParsePrefix(cidr)
	if err != nil {
		return false
	}
	for _, r := range inClusterRanges {
		if r.Bits() <= p.Bits() && r.Contains(p.Addr()) {
			return true
		}
	}
	return false
}

// sandboxDefaultEgress is the policy agent-sandbox's controller manages for
// a SandboxTemplate that sets no networkPolicy: every address but the
// private and link-local ranges, so the public internet is open.
var sandboxDefaultEgress = []networkingv1.NetworkPolicyEgressRule{{
	To: []networkingv1.NetworkPolicyPeer{
		{IPBlock: &networkingv1.IPBlock{CIDR: "0.0.0.0/0", Except: []string{"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16"}}},
		{IPBlock: &networkingv1.IPBlock{CIDR: "::/0", Except: []string{"fc00::/7", "fe80::/10"}}},
	},
}}

// sandboxPolicy records the NetworkPolicy that agent-sandbox manages for a
// SandboxTemplate (networkPolicyManagement Managed, the default): its own
// networkPolicy, or the controller's default.
func (in *kubeInput) sandboxPolicy(d *kubeDoc, ns string) error {
	var spec struct {
		NetworkPolicy *struct {
			Ingress []networkingv1.NetworkPolicyIngressRule `json:"ingress,omitempty"`
			Egress  []networkingv1.NetworkPolicyEgressRule  `json:"egress,omitempty"`
		} `json:"networkPolicy,omitempty"`
		NetworkPolicyManagement string `json:"networkPolicyManagement,omitempty"`
	}
	if err := d.decode([]string{"spec"}, &spec, false); err != nil {
		return err
	}
	if spec.NetworkPolicyManagement == "Unmanaged" {
		return nil
	}
	np := kubePolicy{namespace: ns, name: d.head.Metadata.Name + " (managed by agent-sandbox)", only: d}
	np.spec.PolicyTypes = []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress}
	np.spec.Egress = sandboxDefaultEgress
	if spec.NetworkPolicy != nil {
		np.spec.Egress = spec.NetworkPolicy.Egress
	}
	in.policies = append(in.policies, np)
	return nil
}
