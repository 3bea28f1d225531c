//go:build linux

package userengine

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agentbox/agentbox/engine"
)

// The pair openPty makes reaches the launcher's console socket as the
// runtime's would: what is written to the slave is read on the master the
// socket received, and the slave is a fresh /dev/pts terminal.
func TestPtyReachesTheConsoleSocket(t *testing.T) {
	master, slave, err := openPty()
	if err != nil {
		t.Skipf("no pty on this host: %v", err)
	}
	defer slave.Close()
	if _, err := unix.IoctlGetTermios(int(slave.Fd()), unix.TCGETS); err != nil {
		t.Errorf("the slave is not a terminal: %v", err)
	}
	sock, err := engine.ListenConsole(filepath.Join(t.TempDir(), "console.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer sock.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got := make(chan error, 1)
	var received interface{ Close() error }
	go func() {
		f, err := sock.Receive(ctx)
		if err == nil {
			received = f
			buf := make([]byte, 64)
			_ = f.SetReadDeadline(time.Now().Add(5 * time.Second))
			n, rerr := f.Read(buf)
			if rerr == nil && !strings.Contains(string(buf[:n]), "hello") {
				rerr = errMissing(string(buf[:n]))
			}
			err = rerr
		}
		got <- err
	}()
	if err := sendConsole(sock.Path, master); err != nil {
		t.Fatal(err)
	}
	master.Close() // the launcher's copy is the one that counts
	if _, err := slave.Write([]byte("hello\n")); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	received.Close()
}

type errMissing string

func (e errMissing) Error() string { return "the master read " + string(e) + ", not hello" }
