// Package userengine runs the agent as a dedicated host account
// (agentbox-agent, made by agentbox setup-user) with no OCI runtime and no
// namespaces: the engine of `agentbox run --isolation user`
// (policy.TargetUser, docs/dedicated-user.md).
//
// What keeps the agent in, and where each part is made:
//
//   - Its uid. agentbox-init, started here as root, applies the plan's
//     seccomp filter and Landlock ruleset in the child that becomes the
//     agent, which then switches to the account's uid and gid with no
//     supplementary group but its own and no capability. The workspace is
//     the account's for the run through a POSIX ACL (engine.Grant, which
//     the launcher applies and teardown revokes).
//   - The network fence: an nftables table of the run's own (Fence,
//     "inet agentbox-RUN"), whose output chain accepts the account's TCP to
//     the gateway's loopback port on 127.0.0.1 and ::1, rejects every other
//     TCP connection of the account's sockets and drops every other packet,
//     DNS included: connect(2) fails at once, sendto(2) with EPERM, and
//     nothing leaves.
//   - A cgroup of the run's own on the unified hierarchy
//     (/sys/fs/cgroup/agentbox/RUN, or /sys/fs/cgroup/unified/agentbox/RUN
//     on a hybrid host), which init is cloned into, and the limits on the
//     controllers the host has (cgroup v2, or the v1 memory, pids and cpu
//     hierarchies of a hybrid host).
//
// Teardown kills every process of the cgroup (cgroup.kill), checks that no
// process of the account remains anywhere, removes the fence table and the
// run's home, runs the launcher's cleanups (the grant's revoke) and writes
// the ledger's record. The run's record (Record, user.json in the bundle)
// lets `agentbox gc` do the same after a launcher that was killed.
//
// Since the fence is keyed on the account's uid, two runs of the account at
// once would each drop the other's gateway port: Lock refuses a second.
//
// On macOS the engine is MacEngine (mac.go, macengine.go, mac_darwin.go):
// no init of root's, no cgroup, no nftables; a pf anchor keyed on the
// account's uid, the workspace granted with chmod +a, and agentbox itself
// started as the account under sandbox-exec (the launcher's starter),
// which runs the self-test and then executes the agent. Every command it
// runs is an argv of MacRun's, rendered by a pure function. It has never
// run on a Mac.
package userengine
