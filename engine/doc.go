// Package engine runs a rendered bundle on an OCI runtime and takes it down
// again, provably.
//
// The runtimes (runc by default, crun and runsc by choice) are driven
// through their common command line with agentbox's own --root state
// directory, so that agentbox's containers never mix with Docker's or
// Podman's. A sandbox is created, then started: between the two the
// launcher knows the sandbox's pid. The launcher is the child subreaper of
// the sandbox's init, so it collects the agent's real exit status.
//
// The sandbox never gets the user's file descriptions. With a terminal it
// gets a fresh pty (Terminal), without one three pipes that the session
// copies to and from the user's streams (so that an ftruncate, lseek or
// fcntl inside cannot reach `>> build.log`); whatever of its output goes to
// a terminal passes a termfilter.Writer unless Session.RawTerminal is set,
// and the modes it left set are undone when it ends (Session.Close).
//
// Teardown kills the whole process tree, deletes the runtime state and the
// bundle, and then checks from the host that nothing of the run survives:
// no process in the sandbox's pid namespace or cgroup, no mount under the
// run directory, no runtime state, no socket. The result is the ledger's
// own record, a ledger.Teardown whose Decision is clean or residue. A run
// directory whose launcher died is found by FindStale and cleaned the same
// way.
//
// The launcher drives a backend through the Engine interface (create,
// start, kill, delete, state, teardown); Runtime, the OCI runtime CLI, is
// the first implementation, and Session the create-start-wait of one
// sandbox on any Engine.
package engine
