// Package audit names the faults in a container's configuration: the mounts,
// environment, network, privileges and agent permission mode that turn "the
// process is in a container" into something less than "the agent is isolated".
//
// Every source (an OCI bundle or config.json, `docker inspect` / `podman
// inspect` JSON, a running container read through the Docker or Podman Engine
// API, a compose project, agentbox's own generated spec) is normalised into one
// model, Container, and one ordered list of named checks reads that model
// (Checks); warn-only checks are a separate list (WarnChecks) whose findings
// never fail an audit. The finding catalog (Catalog) gives each code its
// severity, fix, the self-test probe that proves the fix, and the residual risk
// left after it.
//
// Security-relevant defaults, and how to override them:
//
//   - Anything a source cannot read (an external network's internal flag, a
//     daemon's user-namespace remapping) is reported as unknown, and an unknown
//     finding fails like a known one. Fail closed.
//   - Environment values are read only to recognise credentials and engine
//     addresses; they are never printed, never written to JSON and never kept
//     in a report. Names are reported.
//   - Each mount is classified once, by the first code that fits in this order:
//     container-socket-mounted, host-root-mounted, home-directory-mounted,
//     system-directory-mounted, extra-writable-mount. Read-only binds of the
//     system code directories (/usr, /lib*, /bin, /sbin, /opt) are not
//     findings; read-only does not help a home directory. The first four
//     are policy.ClassifyBind's, the classifier (and the path lists) the
//     planner refuses binds with, so both name the same code for a path.
//   - The declared workspace (Options.Workspaces) is the only read-write bind
//     that is expected; every other read-write bind or volume is a finding.
//     Without one, the bind a container's workspace label
//     (policy.WorkspaceLabel, written by agentbox compose) names is the
//     workspace, reported as such; a label that names no read-write bind is
//     reported and ignored, and then no bind is presumed the workspace.
//     Without a label, the single read-write bind (for compose: the project
//     directory's) is presumed it.
//   - Labels are claims of whoever wrote the container: an accept label
//     (policy.AcceptLabelPrefix) gives an informational finding its reason
//     and never accepts a finding that fails (the report notes the label).
//   - Findings are accepted only by code with a written reason
//     (Options.Accept); accepted findings stay in the report, marked so.
//   - auto-approve-permission-mode alone is informational; with any other
//     unaccepted finding it is raised to high: it multiplies a hole, it is not
//     one.
package audit
