package policy

import (
	"sort"
	"strings"
)

// Labels a renderer puts on the containers it writes (agentbox compose's
// services) and the audit reads back from a running container or a compose
// file. They are claims of whoever wrote the container, so the audit lets
// them narrow nothing that fails: the workspace label only names which of the
// container's read-write binds is the workspace, and an accept label only
// gives an informational finding its reason.
const (
	// WorkspaceLabel holds the host path of the container's workspace bind.
	WorkspaceLabel = "io.agentbox.workspace"
	// AcceptLabelPrefix, followed by a finding code, holds the reason the
	// render accepts that finding (a residual the target cannot avoid).
	AcceptLabelPrefix = "io.agentbox.accept."
)

// CodeNoUserNS is the audit's finding for a container whose uids are the
// host's: the residual of a compose project on an engine that does not remap
// users, which agentbox compose accepts by label.
const CodeNoUserNS = "user-namespace-not-used"

// AcceptLabel is the label that carries the reason for accepting code.
func AcceptLabel(code string) string { return AcceptLabelPrefix + code }

// LabelAcceptances reads the accept labels of labels, sorted by code. A label
// without a code or a reason accepts nothing.
func LabelAcceptances(labels map[string]string) []Acceptance {
	var out []Acceptance
	for k, v := range labels {
		code, ok := strings.CutPrefix(k, AcceptLabelPrefix)
		if !ok || code == "" || strings.TrimSpace(v) == "" {
			continue
		}
		out = append(out, Acceptance{Code: code, Reason: strings.TrimSpace(v)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Code < out[j].Code })
	return out
}
