//go:build linux

package containerd

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A daemon in this process's mount namespace (here: this process, on its
// own socket) gets the tmpfs root; one that cannot be asked does not.
func TestDaemonSharesMounts(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "d.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	if !daemonSharesMounts(sock) {
		t.Error("a listener of this process: not in this mount namespace")
	}
	if daemonSharesMounts(filepath.Join(t.TempDir(), "none.sock")) {
		t.Error("no listener: answered that it shares this mount namespace")
	}
}

// The task's root must be the file system of the bundle's root as the
// launcher sees it.
func TestSameRoot(t *testing.T) {
	if err := sameRoot(os.Getpid(), "/"); err != nil {
		t.Errorf("this process's root against /: %v", err)
	}
	if err := sameRoot(os.Getpid(), "/proc"); err == nil || !strings.Contains(err.Error(), "does not see this launcher's mounts") {
		t.Errorf("this process's root against /proc (another file system): %v, want the refusal", err)
	}
}
