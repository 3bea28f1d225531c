package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// RunscFdFlag is the flag of `runsc run` that passes extra files to the
// sandbox's first process, as runc's and crun's --preserve-fds does:
// --pass-fd=HOST:GUEST, once a file (gVisor since 2023; `create` has no
// such flag, so agentbox runs runsc with `run --detach` only).
const RunscFdFlag = "pass-fd"

// RunscPassesFiles reports whether the text of `runsc help run` offers
// RunscFdFlag. Debian 12's runsc (0.0~20221219) does not: its run and
// create take stdio and a console socket only.
func RunscPassesFiles(helpRun string) bool {
	for _, f := range strings.Fields(helpRun) {
		name, _, _ := strings.Cut(strings.TrimLeft(f, "-"), "=")
		if strings.HasPrefix(f, "-") && name == RunscFdFlag {
			return true
		}
	}
	return false
}

// CheckRunsc refuses a runsc at path that cannot pass agentbox-init its
// channel to the launcher (fd 3): without it init gets no configuration,
// runs no probe and never starts the agent, so the sandbox cannot be
// verified. version is the runtime's own (for the message).
func CheckRunsc(ctx context.Context, path, version string) error {
	out, _ := exec.CommandContext(ctx, path, "help", "run").CombinedOutput() // runsc exits 0 or 2 after printing help
	if RunscPassesFiles(string(out)) {
		return nil
	}
	return RunscRefusal(path, version)
}

// RunscRefusal is the error for a runsc without RunscFdFlag.
func RunscRefusal(path, version string) error {
	if version == "" {
		version = "(version unknown)"
	}
	return fmt.Errorf("runsc %s at %s cannot run an agentbox sandbox: its `run` has no --%s, so agentbox-init cannot get its channel to the launcher as fd 3 "+
		"(init takes its configuration, reports the self-test's probes and is told to start the agent over it). "+
		"gVisor itself works on this host; agentbox refuses it rather than run an unverified sandbox. "+
		"Use --runtime runc or --runtime crun, or a gVisor release whose `runsc help run` lists --%s (scripts/runsc-build.sh builds one)", version, path, RunscFdFlag, RunscFdFlag)
}

// passFiles are the flags that hand n extra files to the sandbox's first
// process as fds 3, 4, …: runc's and crun's --preserve-fds N, runsc's
// --pass-fd=K:K for each (on run only: its create passes no file).
func (r Runtime) passFiles(verb string, n int) ([]string, error) {
	if r.Name != "runsc" {
		return []string{"--preserve-fds", strconv.Itoa(n)}, nil
	}
	if verb != "run" {
		return nil, fmt.Errorf("runsc %s cannot pass files to the sandbox (only run has --%s)", verb, RunscFdFlag)
	}
	var out []string
	for fd := 3; fd < 3+n; fd++ {
		out = append(out, fmt.Sprintf("--%s=%d:%d", RunscFdFlag, fd, fd))
	}
	return out, nil
}

// RunscFlags are the global flags of every runsc launch: the sandbox's own
// network stack with loopback only (--network=none: no host interface is
// scraped, no host network stack is used), and no host unix socket
// reachable from the Sentry (--host-uds=none, runsc's default, said out
// loud: the gateway comes through init's dialer instead). No
// --oci-seccomp: runsc would apply the spec's filter with EPERM for every
// SCMP_ACT_ERRNO, whatever its errnoRet, and clone3's ENOSYS, which makes
// glibc fall back to clone, would become EPERM, so no thread could start;
// init's children load the filter themselves in the Sentry instead (the
// launcher's gvisor.go). The host kernel's filter on the Sentry itself is
// gVisor's own.
//
// --gofer-network-namespace=new gives each run's gofer a network namespace
// of its own, which ends with it: runsc's default, one shared empty
// namespace, stays bound at ROOT/null-netns after every sandbox is gone, a
// mount no teardown removes.
var RunscFlags = []string{"--network=none", "--host-uds=none", "--gofer-network-namespace=new"}

// sandboxFlags are the runtime's global flags for a launch.
func (r Runtime) sandboxFlags() []string {
	if r.Name == "runsc" {
		return RunscFlags
	}
	return nil
}

// RunscGrantReason is why a root-owned workspace is lent to the agent
// with chown under runsc (GrantChown) rather than granted with ACLs.
const RunscGrantReason = "gVisor's Sentry checks the workspace's owner and mode bits and evaluates no POSIX ACL (its gofer file system has none), " +
	"so the workspace owner's directories and files are lent to the agent's unprivileged host uid for the run (chown, owner and group) and given back at teardown"

// RunscStateFiles are the files runsc keeps in its --root for the sandbox
// id (agentbox's run id names both the sandbox and its one container):
// the container's state and lock files and the sandbox's control socket.
// runsc keeps no directory per container, as runc and crun do.
func RunscStateFiles(root, id string) []string {
	return []string{
		filepath.Join(root, id+"_sandbox:"+id+".state"),
		filepath.Join(root, id+"_sandbox:"+id+".lock"),
		filepath.Join(root, "runsc-"+id+".sock"),
	}
}

// runscStateLeft is stateLeft under runsc: each of RunscStateFiles that is
// still there, or that runsc still knows the container.
func (r Runtime) runscStateLeft(ctx context.Context, id string) []string {
	var left []string
	for _, p := range RunscStateFiles(r.Root, id) {
		if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			left = append(left, "runsc state file "+p+" left")
		}
	}
	if len(left) == 0 {
		return nil
	}
	if _, err := r.State(ctx, id); err == nil {
		return []string{"container still known to " + r.Name}
	}
	return left
}
