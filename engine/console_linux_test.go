package engine

import (
	"errors"
	"os"
	"testing"

	"golang.org/x/sys/unix"
	"golang.org/x/term"
)

func testPtyPair(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	if err := unix.IoctlSetPointerInt(m, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	s, _, en := unix.Syscall(unix.SYS_IOCTL, uintptr(m), unix.TIOCGPTPEER, uintptr(unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC))
	if en != 0 {
		t.Fatal(en)
	}
	master, slave = os.NewFile(uintptr(m), "master"), os.NewFile(s, "slave")
	t.Cleanup(func() { master.Close(); slave.Close() })
	return master, slave
}

// What was typed ahead on a canonical terminal comes out as typed: whole
// lines, and the end-of-file mark of a ^D (which a read in raw mode would
// return as a NUL) as ^D again; a partial line stays for the raw copy.
func TestPendingInputKeepsEOFAsTyped(t *testing.T) {
	master, slave := testPtyPair(t)
	if _, err := master.Write([]byte("ls -l\n\x04par")); err != nil {
		t.Fatal(err)
	}
	if got := string(pendingInput(slave)); got != "ls -l\n\x04" {
		t.Errorf("pending input %q, want %q", got, "ls -l\n\x04")
	}
	if _, err := term.MakeRaw(int(slave.Fd())); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	if n, err := slave.Read(buf); err != nil || string(buf[:n]) != "par" {
		t.Errorf("after raw mode the terminal holds %q (%v), want the partial line %q", buf[:n], err, "par")
	}
	// Nothing pending, canonical or raw: nothing taken, and no read that
	// would block.
	if got := pendingInput(slave); len(got) != 0 {
		t.Errorf("pending input %q on a raw terminal", got)
	}
	_, fresh := testPtyPair(t)
	if got := pendingInput(fresh); len(got) != 0 {
		t.Errorf("pending input %q on a terminal nothing was typed on", got)
	}
}

// The description pendingInput reads never blocks (another reader may take
// a line poll saw), and the user's own description stays as it was.
func TestReopenNonblockLeavesTheUsersDescription(t *testing.T) {
	_, slave := testPtyPair(t)
	f, err := reopenNonblock(slave)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := unix.Read(int(f.Fd()), make([]byte, 8)); !errors.Is(err, unix.EAGAIN) {
		t.Errorf("a read with nothing typed: %v, want EAGAIN", err)
	}
	fl, err := unix.FcntlInt(slave.Fd(), unix.F_GETFL, 0)
	if err != nil {
		t.Fatal(err)
	}
	if fl&unix.O_NONBLOCK != 0 {
		t.Error("the user's terminal description became non-blocking")
	}
}
