// Package compose renders a resolved sandbox plan (policy.Plan) as a
// hardened Docker Compose project: the agent, agentbox's gateway, and the
// networks between them, written through compose-go's types so that the
// output is valid by construction.
//
// The project has two services and two networks:
//
//   - agent: the image the user names, running the agent. Its root is
//     read-only, it runs as the plan's unprivileged uid with no capabilities,
//     no-new-privileges and agentbox's seccomp profile (and agentbox's AppArmor
//     profile where the plan chose AppArmor), under the plan's memory, pids
//     and CPU limits. /tmp and HOME are fresh tmpfs mounts; the workspace
//     is its only bind. Its environment is explicit: what the agent's
//     adapter (package agents, shared with agentbox run) sets to reach the
//     gateway by its service name, HOME, and the names the plan's allowlist
//     passes through. The per-sandbox gateway key, never a real one, is
//     carried only under the names the lab's audit allows (AgentKeyVars):
//     AGENT_GATEWAY_KEY, OPENAI_API_KEY (codex's model provider reads it
//     there) and ANTHROPIC_AUTH_TOKEN (a bearer token for Claude Code and
//     the Anthropic SDKs). It is attached to the sandbox network only, and
//     labelled with its workspace's host path (policy.WorkspaceLabel), so
//     that `agentbox audit CONTAINER` knows which bind is the workspace.
//   - gateway: agentbox's gateway in an image built locally FROM scratch
//     with the static agentbox binary and the host's CA bundle. It is the
//     only other member of the sandbox network and the only service on the
//     egress network. The real API key reaches it as a Docker secret (a file
//     under secrets/ that the user fills), never through the agent.
//   - networks: sandbox is internal (no route out), egress is an ordinary
//     bridge.
//
// Security-relevant defaults, and how to change them:
//
//   - Both services accept user-namespace-not-used by label
//     (policy.AcceptLabel) with UserNSReason: compose cannot ask every
//     engine for a user namespace. Where the engine gives one (dockerd with
//     userns-remap) the finding does not arise and the label accepts nothing.
//   - The gateway key is a fresh netpolicy token, worth nothing outside the
//     gateway; rendering again into a directory that already holds a project
//     keeps its key (ExistingToken). Delete compose.yaml there to rotate it.
//   - When the output directory lies inside the workspace, the agent gets an
//     empty read-only tmpfs over it: the agent must not read the gateway's
//     key files nor edit the compose file it is started from.
//   - Secret files are created empty, owned by the gateway's uid, mode 0600,
//     and are never read, compared or overwritten.
//   - compose.yaml holds the gateway key and is written with mode 0600.
//   - The agent's limits, uid, environment allowlist, extra binds and
//     accepted findings come from the plan; change them in agentbox.yaml or
//     with the usual flags. The gateway's own limits and ids are constants
//     (GatewayMemory, GatewayPids, GatewayUID), or the invoking user's ids
//     when that user is not root (Options.GatewayUID).
//
// Before anything is written, the rendered project is loaded back with
// compose-go and audited (Audit): a finding that is neither informational nor
// accepted refuses the write. The files themselves are written atomically
// (Write), and a file that differs from what is on disk is not replaced
// without force.
//
// The output is also read by docker-compose 1.29 (Python, Compose file
// format without a version key): Marshal quotes strings that YAML 1.1 would
// read as numbers or booleans (a uid:gid such as 1000:50 is a base-60
// number there) and leaves out depends_on's "required", which 1.29 rejects
// and whose default is what the project needs.
package compose
