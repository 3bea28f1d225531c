package ledger

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestOpenEvidenceRefuses(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, "existing")
	if err := os.WriteFile(existing, []byte("planted"), 0o600); err != nil {
		t.Fatal(err)
	}
	dangling := filepath.Join(dir, "dangling")
	if err := os.Symlink(filepath.Join(dir, "elsewhere"), dangling); err != nil {
		t.Fatal(err)
	}
	ro, err := os.Open(existing)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	stdoutCopy, err := unix.Dup(1)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(stdoutCopy)
	closed := 1000 // far above anything this test process has open
	for _, tt := range []struct {
		dest, want string
	}{
		{"", "empty"},
		{"0", "stdin, stdout and stderr"},
		{"1", "stdin, stdout and stderr"},
		{"2", "stdin, stdout and stderr"},
		{strconv.Itoa(closed), "is not open for writing"},
		{strconv.Itoa(int(ro.Fd())), "is not open for writing"},
		{strconv.Itoa(stdoutCopy), "same file as stdout"},
		{existing, "the file exists"},
		{dangling, "the file exists"},
		{filepath.Join(dir, "no-such-dir", "f"), "no such file"},
	} {
		_, err := OpenEvidence(tt.dest)
		var ee *EvidenceError
		if !errors.As(err, &ee) || !strings.Contains(err.Error(), tt.want) || ee.Fix == "" {
			t.Errorf("OpenEvidence(%q) = %v, want an EvidenceError naming %q with a fix", tt.dest, err, tt.want)
		}
	}
	if data, _ := os.ReadFile(existing); string(data) != "planted" {
		t.Errorf("the existing file became %q", data)
	}
	if _, err := os.Lstat(filepath.Join(dir, "elsewhere")); err == nil {
		t.Error("the dangling symlink was followed")
	}
}

func TestEvidenceFileLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "evidence.jsonl")
	e, err := OpenEvidence(path)
	if err != nil {
		t.Fatal(err)
	}
	if fl, err := unix.FcntlInt(e.f.Fd(), unix.F_GETFD, 0); err != nil || fl&unix.FD_CLOEXEC == 0 {
		t.Errorf("the evidence file is inherited by children (flags %#x, %v)", fl, err)
	}
	e.Probe(Probe{Probe: "mount-tmpfs-denied", Expect: "DENY", Decision: "DENY"})
	e.Record(Record{RunID: "r1", Kind: KindRun, ExitCode: 3})
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("evidence file mode %v (%v), want 0600", fi.Mode(), err)
	}
	data, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], `{"probe":"mount-tmpfs-denied"`) || !strings.HasPrefix(lines[1], `{"event":"record","record":{"run_id":"r1"`) {
		t.Errorf("evidence:\n%s", data)
	}
	var rec struct {
		Event  string
		Record Record
	}
	if err := json.Unmarshal([]byte(lines[1]), &rec); err != nil || rec.Record.ExitCode != 3 {
		t.Errorf("record line %s: %v", lines[1], err)
	}
}

func TestEvidenceInheritedDescriptor(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	fd, err := unix.Dup(int(w.Fd())) // as inherited: not close-on-exec
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	e, err := OpenEvidence(strconv.Itoa(fd))
	if err != nil {
		t.Fatal(err)
	}
	if fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil || fl&unix.FD_CLOEXEC == 0 {
		t.Errorf("the inherited descriptor stays open across exec (flags %#x, %v)", fl, err)
	}
	if err := e.CheckOutside([]string{"/"}); err != nil {
		t.Errorf("a pipe was refused: %v", err)
	}
	e.Failed(2, errors.New("policy: bad key"))
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(r)
	if string(data) != `{"event":"error","exit_code":2,"error":"policy: bad key"}`+"\n" {
		t.Errorf("error line %q", data)
	}
}

func TestEvidenceCheckOutside(t *testing.T) {
	ws := t.TempDir()
	e, err := OpenEvidence(filepath.Join(ws, "evidence.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	var ee *EvidenceError
	if err := e.CheckOutside([]string{"/nonexistent", ws + "/"}); !errors.As(err, &ee) || !strings.Contains(err.Error(), "which the sandbox can write") {
		t.Errorf("evidence in the workspace: %v, want refused", err)
	}
	if err := e.CheckOutside([]string{ws + "-other", filepath.Join(ws, "sub")}); err != nil {
		t.Errorf("evidence outside the sandbox's dirs refused: %v", err)
	}
}

func TestEvidenceReportsWriteErrors(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	e := &Evidence{f: w, Name: "fd 9"}
	e.Probe(Probe{Probe: "p"})
	e.Probe(Probe{Probe: "q"})
	if err := e.Close(); err == nil || !strings.Contains(err.Error(), "evidence fd 9") {
		t.Errorf("Close after a failed write: %v", err)
	}
}
