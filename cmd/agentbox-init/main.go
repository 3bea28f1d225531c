//go:build linux

// Command agentbox-init is agentbox's init: a static binary the launcher
// bind-mounts read-only into the sandbox and runs as PID 1, as uid 0 of the
// sandbox's user namespace (an unprivileged host id) with CAP_SETUID,
// CAP_SETGID, CAP_SETPCAP, CAP_CHOWN and CAP_KILL only, under ids the agent does not
// have (policy.InitIdentity); where the sandbox has one id, as the agent's
// uid with no capability.
//
// Without arguments it speaks the init protocol on fd 3 (see package
// selftest): it reads the configuration, runs the probes in a child that
// first becomes the agent (the agent's ids, every capability set empty) and
// stands where the agent will stand, reports each result, starts the child
// that will become the agent and waits, with that child parked, for the
// launcher's go, has the child apply Landlock to itself and execute the
// agent (init keeps only CAP_KILL once both children are started), reaps
// every zombie, forwards signals to the agent and exits with the agent's
// exit code (128+N when a signal N ended it). It watches the channel to the launcher for the whole run: when it
// closes (the launcher tore the run down, or died), init ends the sandbox.
//
// With --probe it runs probes and prints their results, which tests and
// `agentbox selftest` use:
//
//	agentbox-init --probe all --json < config.json
//	agentbox-init --probe host-home-not-mounted,only-loopback
//
// The configuration (selftest.InitConfig as JSON) is read from stdin when
// stdin is not a terminal; an empty stdin means the zero configuration.
//
// As "agentbox-init userns-exec|mntns-exec|fds-exec …" it is the engine's
// helper that runs an OCI runtime in a namespace of its own, or for a
// containerd shim (internal/nsexec); executed through a link named
// shim-runtime (nsexec.ShimRuntime), it is that shim's runtime, with the
// helper call in the file beside the link.
//
// Build it with CGO_ENABLED=0 so that it needs nothing from the rootfs.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/agentbox/agentbox/internal/nsexec"
)

func main() {
	if nsexec.IsShimRuntime(os.Args[0]) {
		os.Exit(nsexec.ShimMain(os.Args)) // a containerd shim's runtime (engine/containerd)
	}
	if len(os.Args) > 1 && (os.Args[1] == nsexec.UsernsExec || os.Args[1] == nsexec.MntnsExec || os.Args[1] == nsexec.FdsExec) {
		os.Exit(nsexec.Main(os.Args[1:])) // the engine's runtime helpers
	}
	probe := flag.String("probe", "", `run probes NAME[,NAME…] or "all" and print their results`)
	asJSON := flag.Bool("json", false, "with --probe, print JSON lines instead of a table")
	list := flag.Bool("list", false, "list the probe catalog and exit")
	execAgent := flag.Bool("exec-agent", false, "internal: become the agent, confine this process with Landlock and execute a program (init's child)")
	flag.Parse()
	switch {
	case *execAgent:
		os.Exit(execAgentMain())
	case *list:
		os.Exit(listProbes(os.Stdout))
	case *probe != "":
		os.Exit(probeMain(os.Stdin, os.Stdout, os.Stderr, *probe, *asJSON))
	case flag.NArg() > 0:
		fmt.Fprintln(os.Stderr, "agentbox-init: unexpected arguments; the agent's command comes from the init config on fd 3")
		os.Exit(2)
	}
	os.Exit(initMain())
}
