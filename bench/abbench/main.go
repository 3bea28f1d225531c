// Command abbench measures agentbox against a baseline in the same run and
// prints the ratios; scripts/bench.sh (make bench) drives it. It never
// asserts a time: it reports medians, ratios and whether each target of the
// issues was met.
//
//	abbench launch  -work DIR [-runtime runc] [-n 30]   agentbox run -- true vs RUNTIME run + delete
//	abbench pair -before BIN -after BIN -work DIR       two agentbox builds, launch by launch: paired ratio
//	abbench timeline -work DIR [-runtime runc] [-n 10]  one launch's exec/exit events and steps on one clock (perf)
//	abbench selftest -work DIR [-n 10]                  agentbox selftest and the probe suite inside a sandbox
//	abbench suite [-n 20]                               (inside a sandbox) time the probe catalog in-process
//	abbench audit -container NAME -work DIR             agentbox audit CONTAINER vs docker inspect
//	abbench syscalls -work DIR [-rounds 6]              git status and gcc inside agentbox run, seccomp listener vs plain filter
//	abbench exectime [-n 3] -- CMD...                   (inside a sandbox) time a command
//	abbench summary -rows FILE -gobench DIR             the final table
//
// It runs as root, on loopback only: the sandboxes it starts have no
// network but lo, and the probes run with their zero targets (route
// lookups, which send no packet).
package main

import (
	"fmt"
	"os"
)

func main() {
	cmds := map[string]func([]string) error{
		"launch":   runLaunch,
		"pair":     runPair,
		"timeline": runTimeline,
		"selftest": runSelfTest,
		"audit":    runAudit,
		"suite":    runSuite,
		"summary":  runSummary,
		"syscalls": runSyscalls,
		"exectime": runExecTime,
	}
	if len(os.Args) < 2 || cmds[os.Args[1]] == nil {
		fmt.Fprintln(os.Stderr, "usage: abbench launch|pair|timeline|selftest|suite|audit|syscalls|exectime|summary [flags] (see scripts/bench.sh)")
		os.Exit(2)
	}
	if err := cmds[os.Args[1]](os.Args[2:]); err != nil {
		fmt.Fprintln(os.Stderr, "abbench "+os.Args[1]+":", err)
		os.Exit(1)
	}
}
