// Command launchertest is a test-only launcher: `agentbox run` with no
// flags but one, -pause-after STEP, which stops the process (SIGSTOP)
// right after the named step of the pipeline, so that a failure-injection
// test can SIGKILL the launcher at that exact point and check what
// `agentbox gc` finds. It is built by the tests that need it
// (cmd/agentbox's failure_integration_test.go) and never shipped: the
// agentbox command does not import it, and sets no Config.AfterStep
// (guardrails_test.go).
//
//	launchertest -pause-after create -- CMD [ARG...]
//
// It runs in the working directory as its workspace, with the user's own
// policy file and the environment's directories, as `agentbox run` would,
// and links the containerd engine as agentbox-containerd does, so that the
// failure tests also run on engine: containerd (AGENTBOX_TEST_ENGINE).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"syscall"

	"github.com/agentbox/agentbox/engine/containerd"
	"github.com/agentbox/agentbox/launcher"
	"github.com/agentbox/agentbox/policy"
)

func init() {
	launcher.ProvideEngine(launcher.EngineContainerd, launcher.EngineProvider{Open: containerd.Opener, Recorded: containerd.Recorded})
}

func main() {
	pause := flag.String("pause-after", "", "stop after this step (its name in the pipeline: create, self-test, hand over, …)")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: launchertest -pause-after STEP -- CMD [ARG...]")
		os.Exit(launcher.ExitUsage)
	}
	os.Exit(run(*pause, flag.Args()))
}

func run(pause string, argv []string) int {
	cwd, err := os.Getwd()
	if err != nil {
		return fail(err)
	}
	src, err := policy.SourcesFor(cwd, "", "", uint32(os.Geteuid()), os.Getenv)
	if err != nil {
		return fail(err)
	}
	cfg := launcher.Config{
		Argv: argv, Sources: src,
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv,
		AfterStep: func(step string) {
			if step == pause {
				_ = syscall.Kill(os.Getpid(), syscall.SIGSTOP)
			}
		},
	}
	res, err := launcher.Run(context.Background(), cfg)
	if err != nil {
		return fail(err)
	}
	return res.ExitCode
}

func fail(err error) int {
	fmt.Fprintf(os.Stderr, "launchertest: %v\n", err)
	return launcher.ExitCode(err)
}
