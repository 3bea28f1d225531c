package nsexec

import (
	"slices"
	"strings"
)

// FdsExec is the helper a containerd shim runs as its runc (see package
// engine/containerd): a daemon's shim starts the runtime itself, with only
// the three stdio streams, so the files a sandbox's first process gets as
// fds 3, 4, … (init's channel to the launcher) cannot come from the
// launcher's own process as they do with the runtime CLI. The helper
// fetches them from the launcher instead, over a unix socket, and runs the
// runtime's create with them. Every other runtime call passes straight
// through.
const FdsExec = "fds-exec"

// MaxFds bounds how many files one create receives.
const MaxFds = 8

// fdsFlags are FdsExec's flags: --fds-socket PATH (the launcher's socket;
// none receives nothing), --umount PATH and --compose FILE as mntns-exec
// takes them, and --stderr stdout (the sandbox's stderr is its stdout:
// the shim was given no stderr, and the launcher one file as both, whose
// order a second pipe would lose), applied to the create only.
var fdsFlags = []string{"--fds-socket", "--umount", "--compose", "--stderr"}

// CreateVerb is the index in argv (a runtime command line, argv[0] the
// runtime) of its verb when that is "create", or -1 for another call. The
// verb is the first word that is neither a global flag nor the value of
// one of runc's global flags that take a value.
func CreateVerb(argv []string) int {
	valued := []string{"--root", "--log", "--log-format", "--criu", "--rootless"}
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		if !strings.HasPrefix(a, "-") {
			if a == "create" {
				return i
			}
			return -1
		}
		if slices.Contains(valued, a) {
			i++ // its value
		}
	}
	return -1
}
