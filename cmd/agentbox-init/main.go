// Command agentbox-init is agentbox's init: a static binary the launcher
// bind-mounts read-only into the sandbox and runs as PID 1, with the agent's
// uid and no capabilities.
//
// Without arguments it speaks the init protocol on fd 3 (see package
// selftest): it reads the configuration, runs the probes in a child process
// that stands where the agent will stand, reports each result, waits for the
// launcher's go when asked to, applies Landlock to itself, starts the agent,
// reaps every zombie, forwards signals to the agent and exits with the
// agent's exit code (128+N when a signal N ended it).
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
// As "agentbox-init userns-exec|mntns-exec …" it is the engine's helper that
// runs an OCI runtime in a namespace of its own (internal/nsexec).
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
	if len(os.Args) > 1 && (os.Args[1] == nsexec.UsernsExec || os.Args[1] == nsexec.MntnsExec) {
		os.Exit(nsexec.Main(os.Args[1:])) // the engine's runtime helpers
	}
	probe := flag.String("probe", "", `run probes NAME[,NAME…] or "all" and print their results`)
	asJSON := flag.Bool("json", false, "with --probe, print JSON lines instead of a table")
	list := flag.Bool("list", false, "list the probe catalog and exit")
	execAgent := flag.Bool("exec-agent", false, "internal: confine this process with Landlock and execute the agent (init's child)")
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
