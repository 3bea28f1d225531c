package nsexec

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
)

// ShimRuntime is the name of the runtime a containerd shim runs for a
// sandbox that needs FdsExec: a symbolic link in the run's bundle to
// agentbox-init, beside a file ShimArgs(link) holding the helper call
// (FdsExec, its flags, "--", the runtime). Executed through the link,
// agentbox-init finds itself by that name in argv[0], which the shim sets
// to the path it was given, and runs the call with the shim's arguments
// appended. A link, not a script: executing a file checks the mount of
// the file the link resolves to, so a run root on a noexec tmpfs (a
// systemd host's /run) does not stop it.
const ShimRuntime = "shim-runtime"

// ShimArgs is the file beside link that holds its helper call.
func ShimArgs(link string) string { return link + ".json" }

// maxShimArgs bounds the helper call's file.
const maxShimArgs = 64 << 10

// IsShimRuntime reports whether argv0 names agentbox-init executed as a
// shim's runtime.
func IsShimRuntime(argv0 string) bool { return filepath.Base(argv0) == ShimRuntime }

// ShimMain runs the helper call of the link args[0] names with the shim's
// arguments (args[1:]) appended; it returns an exit status only when that
// call could not be made.
func ShimMain(args []string) int {
	argv, err := shimCall(args)
	if err != nil {
		fmt.Fprintf(os.Stderr, "agentbox %s: %v\n", ShimRuntime, err)
		return 4
	}
	return Main(argv)
}

// shimCall reads the helper call of link args[0] and appends args[1:]. The
// file must be a regular file owned by this process's user (root, as the
// shim runs) and writable by no one else: its runtime is executed.
func shimCall(args []string) ([]string, error) {
	name := ShimArgs(args[0])
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.Mode().IsRegular() || !ok || int(st.Uid) != os.Geteuid() || fi.Mode().Perm()&0o022 != 0 {
		return nil, fmt.Errorf("%s: not a regular file of uid %d writable by it alone", name, os.Geteuid())
	}
	data, err := io.ReadAll(io.LimitReader(f, maxShimArgs+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxShimArgs {
		return nil, fmt.Errorf("%s: larger than %d bytes", name, maxShimArgs)
	}
	var call []string
	if err := json.Unmarshal(data, &call); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(call) < 3 || call[0] != FdsExec || call[len(call)-2] != "--" {
		return nil, errors.New(name + ": not a " + FdsExec + " call ending in -- RUNTIME")
	}
	return append(call, args[1:]...), nil
}
