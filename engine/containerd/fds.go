package containerd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/agentbox/agentbox/engine"
	"github.com/agentbox/agentbox/internal/nsexec"
)

// In the bundle: the link the shim runs as its runtime (nsexec.ShimRuntime,
// with its call beside it), and the socket on which fds-exec fetches the
// sandbox's extra files.
const (
	shimRuntimeFile = nsexec.ShimRuntime
	fdsSocketFile   = "fds.sock"
)

// helperCall is one fds-exec invocation: the flags it gets and the runtime
// it runs. Zero flags need no helper at all.
type helperCall struct {
	helper, runtime          string
	fdsSocket, umount, nests string
	// stderrIsStdout: the create gives the sandbox its stdout as stderr.
	stderrIsStdout bool
}

func (h helperCall) needed() bool {
	return h.fdsSocket != "" || h.umount != "" || h.nests != "" || h.stderrIsStdout
}

// call is the helper's argv before the runtime's own arguments: fds-exec,
// its flags, "--", the runtime (nsexec.ShimMain appends what the shim
// passes).
func (h helperCall) call() []string {
	args := []string{nsexec.FdsExec}
	stderr := ""
	if h.stderrIsStdout {
		stderr = "stdout"
	}
	for _, f := range []struct{ flag, value string }{{"--fds-socket", h.fdsSocket}, {"--umount", h.umount}, {"--compose", h.nests}, {"--stderr", stderr}} {
		if f.value != "" {
			args = append(args, f.flag, f.value)
		}
	}
	return append(args, "--", h.runtime)
}

// shimRuntime returns the binary the shim is to run as its runc for the
// bundle: the plan's runtime itself, or the link to agentbox-init that runs
// it through fds-exec when the create needs files passed (files > 0), a
// hidden mount, nested binds, or the sandbox's stdout as its stderr too
// (oneOutput). The link's call is written first, so that the link never
// names a call that is not there.
func shimRuntime(rt engine.Runtime, bundle string, files int, stderrIsStdout bool) (string, error) {
	h := helperCall{helper: rt.Helper, runtime: rt.Path, umount: rt.Hide, stderrIsStdout: stderrIsStdout}
	if files > 0 {
		h.fdsSocket = filepath.Join(bundle, fdsSocketFile)
	}
	if _, err := os.Lstat(filepath.Join(bundle, engine.ComposeFile)); err == nil {
		h.nests = filepath.Join(bundle, engine.ComposeFile)
	}
	if !h.needed() {
		return rt.Path, nil
	}
	if h.helper == "" {
		return "", errors.New("the sandbox needs agentbox-init as the shim's runtime helper (engine.Runtime.Helper) to pass its files, and none was found")
	}
	if !filepath.IsAbs(h.helper) {
		return "", fmt.Errorf("the shim's runtime helper %q is not an absolute path", h.helper)
	}
	link := filepath.Join(bundle, shimRuntimeFile)
	call, err := json.Marshal(h.call())
	if err == nil {
		err = engine.WriteFileAtomic(nsexec.ShimArgs(link), call, 0o600)
	}
	if err == nil {
		if err = os.Remove(link); errors.Is(err, os.ErrNotExist) {
			err = nil
		}
	}
	if err == nil {
		err = os.Symlink(h.helper, link)
	}
	if err != nil {
		return "", fmt.Errorf("shim runtime: %w", err)
	}
	return link, nil
}

// relink makes the link name target instead, atomically: the shim, which
// executes it by name, runs either the old target or the new one, never
// nothing.
func relink(link, target string) error {
	next := link + ".next"
	_ = os.Remove(next)
	if err := os.Symlink(target, next); err != nil {
		return err
	}
	if err := os.Rename(next, link); err != nil {
		_ = os.Remove(next)
		return err
	}
	return nil
}

// fdServer hands the sandbox's extra files to fds-exec, once, and only to
// a root peer (the shim runs as root; nobody else may take init's
// channel).
type fdServer struct {
	l    *net.UnixListener
	path string
	done chan error
}

func serveFds(path string, files []*os.File) (*fdServer, error) {
	if len(files) > nsexec.MaxFds {
		return nil, fmt.Errorf("%d extra files for the sandbox; the containerd engine passes at most %d", len(files), nsexec.MaxFds)
	}
	_ = os.Remove(path)
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("fds socket: %w", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		l.Close()
		return nil, fmt.Errorf("fds socket: %w", err)
	}
	s := &fdServer{l: l, path: path, done: make(chan error, 1)}
	go func() { s.done <- s.serve(files) }()
	return s, nil
}

func (s *fdServer) serve(files []*os.File) error {
	fds := make([]int, len(files))
	for i, f := range files {
		fds[i] = int(f.Fd())
	}
	for {
		conn, err := s.l.AcceptUnix()
		if err != nil {
			return err
		}
		if !peerIsRoot(conn) {
			conn.Close()
			continue
		}
		_, _, err = conn.WriteMsgUnix([]byte{byte(len(fds))}, unix.UnixRights(fds...), nil)
		conn.Close()
		return err
	}
}

// close stops serving and removes the socket; it reports whether the
// files were handed over.
func (s *fdServer) close(ctx context.Context) bool {
	s.l.Close()
	_ = os.Remove(s.path)
	select {
	case err := <-s.done:
		return err == nil
	case <-ctx.Done():
		return false
	}
}
