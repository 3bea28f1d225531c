//go:build !linux

package nsexec

import (
	"errors"
	"fmt"
	"os"
)

// errNotLinux is every helper's answer off Linux: they finish the setup of
// a Linux namespace and execute a Linux OCI runtime.
var errNotLinux = errors.New("the runtime helpers need Linux namespaces; on macOS agentbox runs the agent as a dedicated account: --isolation user")

func setup(string, map[string]string, []string) ([]string, error) { return nil, errNotLinux }

// Prepare refuses: mount namespaces are Linux's.
func Prepare(string, string) error { return errNotLinux }

func fdsMain(map[string]string, []string) int {
	fmt.Fprintf(os.Stderr, "agentbox %s: %v\n", FdsExec, errNotLinux)
	return 4
}
