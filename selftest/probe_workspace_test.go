//go:build linux

package selftest

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// A workspace deeper than a sockaddr_un holds is still probed: the probe
// connects through its directory's fd.
func TestWorkspaceSocketLongPath(t *testing.T) {
	dir := filepath.Join(t.TempDir(), strings.Repeat("d", 100))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	l, err := net.Listen("unix", "/proc/self/fd/"+strconv.Itoa(fd)+"/s.sock")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	token := []byte("token")
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Write(token)
			c.Close()
		}
	}()
	p := filepath.Join(dir, "s.sock")
	if len(p) < maxSunPath {
		t.Fatalf("path %d bytes: the test needs a longer one", len(p))
	}
	cfg := &InitConfig{Targets: Targets{WorkspaceSocket: &NetCanary{Addr: p, TokenSHA256: SHA256(token)}}}
	if o := probeWorkspaceSocket(&Env{Config: cfg}); o.decision != Allow || o.observed != "reached-canary" {
		t.Errorf("%s %s (%s), want ALLOW reached-canary: nothing covers it", o.decision, o.observed, o.detail)
	}
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if o := probeWorkspaceSocket(&Env{Config: cfg}); o.decision != Deny || o.observed != "absent" {
		t.Errorf("%s %s, want DENY absent", o.decision, o.observed)
	}
	if o := probeWorkspaceSocket(&Env{Config: &InitConfig{}}); o.decision != Unknown {
		t.Errorf("no canary: %s, want UNKNOWN", o.decision)
	}
}
