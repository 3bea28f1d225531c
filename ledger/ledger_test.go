package ledger

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestStateDir(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		euid    int
		want    string
		wantErr string
	}{
		{"override", map[string]string{"AGENTBOX_STATE_DIR": "/tmp/x/", "HOME": "/home/ana"}, 1000, "/tmp/x", ""},
		{"override beats root", map[string]string{"AGENTBOX_STATE_DIR": "/tmp/x"}, 0, "/tmp/x", ""},
		{"relative override", map[string]string{"AGENTBOX_STATE_DIR": "state"}, 1000, "", "not an absolute path"},
		{"root", map[string]string{"HOME": "/root", "XDG_STATE_HOME": "/root/.st"}, 0, "/var/lib/agentbox", ""},
		{"xdg", map[string]string{"HOME": "/home/ana", "XDG_STATE_HOME": "/srv/st"}, 1000, "/srv/st/agentbox", ""},
		{"relative xdg ignored", map[string]string{"HOME": "/home/ana", "XDG_STATE_HOME": "st"}, 1000, "/home/ana/.local/state/agentbox", ""},
		{"home default", map[string]string{"HOME": "/home/ana"}, 1000, "/home/ana/.local/state/agentbox", ""},
		{"no home", map[string]string{}, 1000, "", "HOME is not set"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := StateDir(func(k string) string { return tt.env[k] }, tt.euid)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("StateDir = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestDefaultUsesOverride(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("AGENTBOX_STATE_DIR", dir)
	l, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, FileName); l.Path != want {
		t.Errorf("Default().Path = %q, want %q", l.Path, want)
	}
}

func tempLedger(t *testing.T) *Ledger {
	t.Helper()
	return Open(filepath.Join(t.TempDir(), "state", FileName))
}

func rec(id string) Record { return Record{RunID: id, Kind: KindRun, Start: t0} }

func TestAppendList(t *testing.T) {
	l := tempLedger(t)
	recs, warns, err := l.List()
	if err != nil || len(recs) != 0 || len(warns) != 0 {
		t.Fatalf("List of a missing ledger = %v, %v, %v; want empty", recs, warns, err)
	}
	want := []Record{fullRecord(), rec("b"), rec("c")}
	for _, r := range want {
		if err := l.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	got, warns, err := l.List()
	if err != nil || len(warns) != 0 {
		t.Fatalf("List: %v, warnings %v", err, warns)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("List (-want +got):\n%s", diff)
	}
	for path, mode := range map[string]os.FileMode{l.Path: 0o600, filepath.Dir(l.Path): 0o700} {
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != mode {
			t.Errorf("%s: mode %v (%v), want %v", path, fi.Mode().Perm(), err, mode)
		}
	}
}

func TestAppendRejectsInvalid(t *testing.T) {
	l := tempLedger(t)
	if err := l.Append(Record{RunID: "x", Kind: "nope", Start: t0}); err == nil {
		t.Fatal("Append of an invalid record succeeded")
	}
	if _, err := os.Stat(l.Path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("invalid record touched the disk: %v", err)
	}
}

func writeRaw(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

// TestTornAndCorruptLines: a crash leaves half a record; reading skips it
// with a warning, and the next Append starts on a new line so that no good
// record is lost.
func TestTornAndCorruptLines(t *testing.T) {
	l := tempLedger(t)
	if err := l.Append(rec("a")); err != nil {
		t.Fatal(err)
	}
	writeRaw(t, l.Path, "not json\n")
	if err := l.Append(rec("b")); err != nil {
		t.Fatal(err)
	}
	writeRaw(t, l.Path, `{"run_id":"torn","kind":"ru`)

	got, warns, err := l.List()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Record{rec("a"), rec("b")}, got); diff != "" {
		t.Errorf("List after a crash (-want +got):\n%s", diff)
	}
	checkWarns(t, warns, []LineError{{Line: 2}, {Line: 4, Torn: true}})

	if err := l.Append(rec("c")); err != nil {
		t.Fatal(err)
	}
	got, warns, err = l.List()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Record{rec("a"), rec("b"), rec("c")}, got); diff != "" {
		t.Errorf("List after appending past a torn line (-want +got):\n%s", diff)
	}
	checkWarns(t, warns, []LineError{{Line: 2}, {Line: 4}})
}

func checkWarns(t *testing.T, warns []error, want []LineError) {
	t.Helper()
	if len(warns) != len(want) {
		t.Fatalf("warnings = %v, want %d", warns, len(want))
	}
	for i, w := range warns {
		var le *LineError
		if !errors.As(w, &le) {
			t.Fatalf("warning %v is not a *LineError", w)
		}
		if le.Line != want[i].Line || le.Torn != want[i].Torn {
			t.Errorf("warning %d = line %d torn %v, want line %d torn %v", i, le.Line, le.Torn, want[i].Line, want[i].Torn)
		}
	}
}

func TestFind(t *testing.T) {
	recs := []Record{rec("20251129T0744-aa"), rec("20251129T0744-ab"), rec("20251130T0900-cc"), rec("dup"), rec("dup")}
	recs[3].ExitCode, recs[4].ExitCode = 1, 2
	tests := []struct {
		id       string
		want     string
		wantExit int
		wantErr  error
	}{
		{id: "20251129T0744-aa", want: "20251129T0744-aa"},
		{id: "20251130", want: "20251130T0900-cc"},
		{id: "20251129T0744-a", wantErr: ErrAmbiguous},
		{id: "2025", wantErr: ErrAmbiguous},
		{id: "2026", wantErr: ErrNotFound},
		{id: "", wantErr: ErrNotFound},
		{id: "aa", wantErr: ErrNotFound}, // prefix, not substring
		{id: "dup", want: "dup", wantExit: 2},
		{id: "du", want: "dup", wantExit: 2},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			got, err := Find(recs, tt.id)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil || got.RunID != tt.want || got.ExitCode != tt.wantExit {
				t.Errorf("Find = %s exit %d, %v; want %s exit %d", got.RunID, got.ExitCode, err, tt.want, tt.wantExit)
			}
		})
	}
}

func TestGet(t *testing.T) {
	l := tempLedger(t)
	for _, id := range []string{"run-1", "run-2"} {
		if err := l.Append(rec(id)); err != nil {
			t.Fatal(err)
		}
	}
	writeRaw(t, l.Path, "{")
	r, warns, err := l.Get("run-2")
	if err != nil || r.RunID != "run-2" || len(warns) != 1 {
		t.Errorf("Get = %s, %v, %v; want run-2 with one warning", r.RunID, warns, err)
	}
	if _, _, err := l.Get("run-3"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get(run-3) err = %v, want ErrNotFound", err)
	}
}

const (
	appendHelperEnv = "AGENTBOX_LEDGER_APPEND_HELPER"
	appendProcs     = 4
	appendEach      = 25
	appendRoutines  = 50
)

// TestAppendConcurrent appends large records from many goroutines and
// several processes at once; every record must come back whole.
func TestAppendConcurrent(t *testing.T) {
	l := tempLedger(t)
	procs := make([]*exec.Cmd, appendProcs)
	for i := range procs {
		procs[i] = exec.Command(os.Args[0])
		procs[i].Env = append(os.Environ(), appendHelperEnv+"="+l.Path, "AGENTBOX_HELPER_PREFIX=p"+strconv.Itoa(i))
		procs[i].Stderr = os.Stderr
		if err := procs[i].Start(); err != nil {
			t.Fatal(err)
		}
	}
	appendMany(t, l, "g", appendRoutines)
	for _, p := range procs {
		if err := p.Wait(); err != nil {
			t.Fatalf("helper process: %v", err)
		}
	}
	got, warns, err := l.List()
	if err != nil || len(warns) != 0 {
		t.Fatalf("List: %v, warnings %v", err, warns)
	}
	if want := appendRoutines + appendProcs*appendEach; len(got) != want {
		t.Fatalf("got %d records, want %d", len(got), want)
	}
	seen := map[string]bool{}
	for _, r := range got {
		if seen[r.RunID] {
			t.Errorf("record %s appears twice", r.RunID)
		}
		seen[r.RunID] = true
		if r.Notes != bigNotes(r.RunID) {
			t.Errorf("record %s came back altered", r.RunID)
		}
	}
}

// TestMain runs the test binary as a helper process of
// TestAppendConcurrent when appendHelperEnv names a ledger, and as the
// tests otherwise.
func TestMain(m *testing.M) {
	if path := os.Getenv(appendHelperEnv); path != "" {
		for _, err := range appendRecords(Open(path), os.Getenv("AGENTBOX_HELPER_PREFIX"), appendEach) {
			fmt.Fprintln(os.Stderr, "append helper:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// bigNotes is a record body larger than a pipe buffer, so that a write
// that is not atomic would show.
func bigNotes(id string) string { return strings.Repeat(id+" ", 100000/(len(id)+1)) }

func appendMany(t *testing.T, l *Ledger, prefix string, n int) {
	t.Helper()
	for _, err := range appendRecords(l, prefix, n) {
		t.Error(err)
	}
}

// appendRecords appends n big records concurrently and returns the errors.
func appendRecords(l *Ledger, prefix string, n int) []error {
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			r := rec(fmt.Sprintf("%s-%d", prefix, i))
			r.Notes = bigNotes(r.RunID)
			if err := l.Append(r); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	var out []error
	for err := range errs {
		out = append(out, err)
	}
	return out
}

func TestLatest(t *testing.T) {
	at := func(id string, min int) Record {
		r := rec(id)
		r.Start = t0.Add(time.Duration(min) * time.Minute)
		return r
	}
	recs := []Record{at("a", 0), at("c", 2), at("b", 1), at("d", 2)}
	ids := func(rs []Record) []string {
		var out []string
		for _, r := range rs {
			out = append(out, r.RunID)
		}
		return out
	}
	tests := []struct {
		n    int
		want []string
	}{
		{0, []string{"d", "c", "b", "a"}},
		{-1, []string{"d", "c", "b", "a"}},
		{2, []string{"d", "c"}},
		{10, []string{"d", "c", "b", "a"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, ids(Latest(recs, tt.n))); diff != "" {
			t.Errorf("Latest(%d) (-want +got):\n%s", tt.n, diff)
		}
	}
	if recs[0].RunID != "a" || recs[3].RunID != "d" {
		t.Error("Latest modified its input")
	}
	if got := Latest(nil, 3); len(got) != 0 {
		t.Errorf("Latest(nil) = %v", got)
	}
}
