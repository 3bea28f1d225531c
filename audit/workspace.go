package audit

import (
	"fmt"
	"strings"

	"github.com/agentbox/agentbox/policy"
)

// PresumedWorkspaceNote is what the Mounts section says beside a presumed
// workspace.
const PresumedWorkspaceNote = "workspace, presumed; declare it with --workspace"

// composeWorkingDirLabel is the label docker compose sets on every container
// it starts: the project directory.
const composeWorkingDirLabel = "com.docker.compose.project.working_dir"

// LabeledWorkspaceNote is what the Mounts section says beside the
// workspace a container's label names.
const LabeledWorkspaceNote = "workspace, from label " + policy.WorkspaceLabel

// FromLabels reads the labels agentbox's renderers write (policy.
// WorkspaceLabel, policy.AcceptLabelPrefix) into the model.
func (c *Container) FromLabels(labels map[string]string) {
	c.WorkspaceLabel = strings.TrimSpace(labels[policy.WorkspaceLabel])
	c.LabelAccepts = policy.LabelAcceptances(labels)
}

// labeledWorkspace returns the host path of the read-write bind c's
// workspace label names, or "" and a note saying why the label is ignored.
// A label is read only when o declares no workspace; it matches a bind by
// its host path, resolved like the declared ones. It only says which bind is
// the workspace: the bind is then judged as a declared workspace would be
// (a home or system directory stays a finding).
func labeledWorkspace(c *Container, o *Options) (string, string) {
	if len(o.Workspaces) > 0 || c.WorkspaceLabel == "" {
		return "", ""
	}
	want := resolveAll([]string{c.WorkspaceLabel})
	for _, m := range c.Mounts {
		if !isHostMount(m) || !writable(m) {
			continue
		}
		for _, w := range want {
			if m.hostPath() == w {
				return w, ""
			}
		}
	}
	return "", fmt.Sprintf("label %s=%s names no read-write bind of this container: ignored, and no bind is presumed the workspace", policy.WorkspaceLabel, c.WorkspaceLabel)
}

// presumeWorkspace returns the host path of c's presumed workspace, or ""
// when o declares workspaces or none can be presumed. Without a declared
// workspace or workspace label, the read-write bind a sandbox is for is
// presumed to be it:
//
//   - for compose (or a container compose started), the bind of the project
//     directory, else the bind on the service's working_dir;
//   - else the container's single read-write bind.
//
// Only a bind that would be a clean workspace if declared counts (not a
// home directory, a system directory or an engine socket); every further
// read-write bind stays a finding.
func presumeWorkspace(c *Container, o *Options) string {
	if len(o.Workspaces) > 0 || c.WorkspaceLabel != "" {
		return ""
	}
	cands := workspaceCandidates(c, o)
	if c.ProjectDir != "" {
		dirs := resolveAll([]string{c.ProjectDir})
		for _, m := range cands {
			for _, d := range dirs {
				if m.hostPath() == d {
					return d
				}
			}
		}
	}
	if c.WorkingDir != "" {
		for _, m := range cands {
			if cleanPath(m.Destination) == cleanPath(c.WorkingDir) {
				return m.hostPath()
			}
		}
	}
	if len(cands) == 1 {
		return cands[0].hostPath()
	}
	return ""
}

// workspaceCandidates are c's read-write host binds that would be clean if
// declared as the workspace.
func workspaceCandidates(c *Container, o *Options) []Mount {
	var out []Mount
	for _, m := range c.Mounts {
		if !isHostMount(m) || !writable(m) || policy.IsEngineSocket(cleanPath(m.Destination)) {
			continue
		}
		p := m.hostPath()
		f := o.bindFacts(m)
		f.Workspaces = []string{p}
		if policy.ClassifyBind(p, f).Code == "" {
			out = append(out, m)
		}
	}
	return out
}
