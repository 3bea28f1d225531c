//go:build linux

package bridge

import (
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestDialerHandsOutGatewayConnections(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "gw.sock")
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
			_, _ = c.Write([]byte("gateway"))
			c.Close()
		}
	}()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	mine, err := net.FileConn(os.NewFile(uintptr(fds[0]), "launcher"))
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- ServeDialer(mine.(*net.UnixConn), sock) }()
	d, err := NewDialer(os.NewFile(uintptr(fds[1]), "init"))
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		c, err := d.Dial()
		if err != nil {
			t.Fatal(err)
		}
		b := make([]byte, 16)
		n, _ := c.Read(b)
		c.Close()
		if string(b[:n]) != "gateway" {
			t.Fatalf("read %q through the dialed connection, want the gateway's greeting", b[:n])
		}
	}
	l.Close()
	os.Remove(sock)
	if _, err := d.Dial(); err == nil {
		t.Error("Dial succeeded with the gateway gone")
	}
	d.Close()
	if err := <-served; err != nil {
		t.Errorf("ServeDialer after init closed: %v", err)
	}
}
