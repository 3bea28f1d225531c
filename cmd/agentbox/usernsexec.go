package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"syscall"
)

// userns-exec is how a rootless launcher runs its OCI runtime inside the
// user namespace of engine.UserNS: started in a fresh namespace, it waits
// until the launcher has installed the id maps (the sync pipe closes), then
// becomes the runtime; the exec gives it full capabilities as root of that
// namespace. Not for people, so not listed in the help.
func init() {
	register(command{name: "userns-exec", run: runUsernsExec})
}

func runUsernsExec(_ context.Context, s stdio, args []string) int {
	if len(args) < 4 || args[0] != "--sync-fd" || args[2] != "--" {
		fmt.Fprintln(s.Err, "agentbox userns-exec: usage: userns-exec --sync-fd N -- RUNTIME ARG... (run by agentbox itself)")
		return exitUsage
	}
	fd, err := strconv.Atoi(args[1])
	if err != nil || fd < 3 {
		fmt.Fprintln(s.Err, "agentbox userns-exec: bad --sync-fd", args[1])
		return exitUsage
	}
	sync := os.NewFile(uintptr(fd), "sync")
	if _, err := io.Copy(io.Discard, sync); err != nil {
		fmt.Fprintln(s.Err, "agentbox userns-exec: waiting for the id maps:", err)
		return exitHost
	}
	sync.Close()
	argv := args[3:]
	err = syscall.Exec(argv[0], argv, os.Environ())
	fmt.Fprintf(s.Err, "agentbox userns-exec: exec %s: %v\n", argv[0], err)
	return exitHost
}
