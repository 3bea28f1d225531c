//go:build linux

package engine

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// passOn stands in for the runtime: it duplicates the sandbox's ends, as
// the sandbox's processes hold them once the runtime passed them on.
func passOn(t *testing.T, s *streams) (in, out, errf *os.File) {
	t.Helper()
	dup := func(f *os.File) *os.File {
		if f == nil {
			return nil
		}
		fd, err := unix.Dup(int(f.Fd()))
		if err != nil {
			t.Fatal(err)
		}
		return os.NewFile(uintptr(fd), f.Name())
	}
	return dup(s.sandbox.In), dup(s.sandbox.Out), dup(s.sandbox.Err)
}

// The sandbox writes to pipes: its output reaches the user's files, which
// it cannot truncate, seek or change the flags of; its stdin is a copy of
// the user's and ends when the user's does.
func TestStreamsNeverHandOverTheUsersFiles(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "build.log")
	if err := os.WriteFile(log, []byte("earlier\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	userOut, err := os.OpenFile(log, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer userOut.Close()
	input := filepath.Join(dir, "input")
	if err := os.WriteFile(input, []byte("typed ahead"), 0o644); err != nil {
		t.Fatal(err)
	}
	userIn, err := os.OpenFile(input, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer userIn.Close()

	s, err := newStreams(userIn, userOut, userOut, false)
	if err != nil {
		t.Fatal(err)
	}
	in, out, errf := passOn(t, s)
	s.start()
	if err := unix.Ftruncate(int(out.Fd()), 0); !errors.Is(err, unix.EINVAL) {
		t.Errorf("ftruncate of the sandbox's stdout: %v, want EINVAL (a pipe)", err)
	}
	if _, err := unix.Seek(int(out.Fd()), 0, io.SeekStart); !errors.Is(err, unix.ESPIPE) {
		t.Errorf("lseek of the sandbox's stdout: %v, want ESPIPE", err)
	}
	if _, err := unix.FcntlInt(out.Fd(), unix.F_SETFL, 0); err != nil { // clears O_APPEND of a shared description, were it one
		t.Fatal(err)
	}
	if _, err := in.Write([]byte("x")); err == nil {
		t.Error("the sandbox wrote into its stdin")
	}
	got, _ := io.ReadAll(in)
	_, _ = out.Write([]byte("stdout line\n"))
	_, _ = errf.Write([]byte("stderr line\n"))
	for _, f := range []*os.File{in, out, errf} {
		f.Close()
	}
	s.drain(context.Background())
	s.close()

	if string(got) != "typed ahead" {
		t.Errorf("the sandbox read %q from stdin, want the user's input", got)
	}
	data, _ := os.ReadFile(log)
	if !bytes.HasPrefix(data, []byte("earlier\n")) || !bytes.Contains(data, []byte("stdout line\n")) || !bytes.Contains(data, []byte("stderr line\n")) {
		t.Errorf("build.log holds %q", data)
	}
	if data, _ := os.ReadFile(input); string(data) != "typed ahead" {
		t.Errorf("the user's stdin file became %q", data)
	}
}

// A reader that went away ends the copy and the sandbox's writes fail, as
// they would have on the user's pipe; the launcher lives on.
func TestStreamsUserPipeClosed(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	defer w.Close()
	s, err := newStreams(nil, w, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	_, out, _ := passOn(t, s)
	defer out.Close()
	s.start()
	defer s.close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := out.Write(make([]byte, 4096))
		if errors.Is(err, syscall.EPIPE) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sandbox's writes still succeed: %v", err)
		}
	}
}

// openPty returns a new pty's master and slave.
func openPty(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no ptys: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	sl, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(); sl.Close() })
	return m, sl
}

// Output copied to a terminal passes one filter (stdout and stderr are the
// same terminal, so a sequence split between them is still seen whole),
// and the modes left set are undone at the end.
func TestStreamsFilterATerminal(t *testing.T) {
	master, slave := openPty(t)
	s, err := newStreams(nil, slave, slave, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.filters) != 1 {
		t.Fatalf("%d filters for one terminal, want 1", len(s.filters))
	}
	_, out, errf := passOn(t, s)
	s.start()
	_, _ = out.Write([]byte("A\x1b]52;c;"))
	time.Sleep(50 * time.Millisecond) // let the first half through on its own
	_, _ = errf.Write([]byte("eA==\x07B\x1b[?1049h"))
	out.Close()
	errf.Close()
	s.drain(context.Background())
	s.close()
	slave.Close()
	var got bytes.Buffer
	_, _ = io.Copy(&got, master) // EIO once the slave is closed
	if want := "AB\x1b[?1049h\x1b[?1049l"; got.String() != want {
		t.Errorf("the terminal got %q, want %q", got.String(), want)
	}
	if d := s.dropped(); d.Clipboard != 1 {
		t.Errorf("dropped %+v, want the clipboard write", d)
	}
}

// One file given as stdout and stderr (`>log 2>&1`, a terminal) gets what
// the sandbox wrote to either in the order it wrote it: the sandbox has
// one pipe as both.
func TestStreamsOneFileKeepsTheOrder(t *testing.T) {
	log := filepath.Join(t.TempDir(), "build.log")
	user, err := os.Create(log)
	if err != nil {
		t.Fatal(err)
	}
	defer user.Close()
	s, err := newStreams(nil, user, user, false)
	if err != nil {
		t.Fatal(err)
	}
	_, out, errf := passOn(t, s)
	// Written before the copy starts: two pipes would be copied one after
	// the other, never interleaved.
	for i, f := range []*os.File{out, errf, out, errf} {
		_, _ = f.Write([]byte{byte('1' + i)})
	}
	s.start()
	out.Close()
	errf.Close()
	s.drain(context.Background())
	s.close()
	if data, _ := os.ReadFile(log); string(data) != "1234" {
		t.Errorf("build.log holds %q, want %q", data, "1234")
	}
}
