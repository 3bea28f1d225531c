package engine

import (
	"os/exec"

	"github.com/agentbox/agentbox/internal/nsexec"
)

// runInMountNS runs cmd (a runtime invocation) in a new mount namespace in
// which the mount at hide is covered (unless hide is "") and the
// composition file compose is laid out (unless ""), and waits for it: what
// the mntns-exec helper does, without its process (nsexec.StartInMountNS).
func runInMountNS(cmd *exec.Cmd, hide, compose string) error {
	if err := nsexec.StartInMountNS(cmd, hide, compose); err != nil {
		return err
	}
	return cmd.Wait()
}
