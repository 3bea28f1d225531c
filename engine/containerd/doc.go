// Package containerd runs agentbox's sandbox as a container and task of a
// containerd daemon (agentbox run --engine containerd), for hosts whose
// containers are meant to live under the daemon that monitors them.
//
// The sandbox is the same as on the runtime CLI: the launcher renders and
// audits the same spec and writes the same bundle; the engine hands that
// spec to containerd unchanged except for paths made absolute (the shim's
// bundle is its own directory), with the prepared root as an unmanaged
// rootfs: no image, no snapshot. Containers live in agentbox's own
// containerd namespace ("agentbox"), named by run id, and run under
// containerd's runc shim (io.containerd.runc.v2) with the runtime the plan
// chose as its binary and agentbox's own runtime state directory.
//
// A shim starts the runtime itself, with only the three stdio streams, so
// the files that the sandbox's first process gets as fds 3, 4, … (init's
// channel to the launcher) travel another way: the shim's runtime binary
// is a link in the bundle to agentbox-init, run as fds-exec (package
// internal/nsexec), which receives them over a root-only socket in the
// bundle for the create; once the task exists, the link names the runtime
// itself, whose other calls need no helper. The sandbox's stdio are FIFOs
// in the run directory that the shim copies, and the launcher copies on to
// its own pipes (so the sandbox never holds the user's files either); with
// a terminal, the shim's pty is relayed through a pty of the launcher's.
//
// The first process's parent is the shim, not the launcher, so its exit
// code comes from the task (engine.Waiter). Teardown deletes the task
// (without a kill when its exit was seen) and the container, takes down
// what the runtime CLI's teardown takes down, and then proves from the
// host and from the daemon that the task, the container, the shim
// process, its bundle directory, the runtime's state and any snapshot of
// that id are gone; anything left is named in the ledger's teardown
// record (RuntimeStateLeft) and makes it a residue. The run directory
// records the daemon's address (containerd.json), so that agentbox gc
// cleans a crashed run on the daemon it ran on.
//
// Security-relevant defaults: the engine needs root (containerd's socket is
// root's), refuses daemons older than 1.6 (MinVersion), and never runs a
// runtime the plan did not choose.
package containerd
