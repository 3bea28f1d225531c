package denials

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentbox/agentbox/ledger"
)

// captured reads testdata/landlock-audit.txt: records as the launcher's
// socket received them on this kernel.
func captured(t *testing.T) []auditRecord {
	t.Helper()
	f, err := os.Open("testdata/landlock-audit.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []auditRecord
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		typ, text, ok := strings.Cut(line, " ")
		n, err := strconv.Atoi(typ)
		if !ok || err != nil {
			t.Fatalf("testdata line %q", line)
		}
		out = append(out, auditRecord{Type: uint16(n), Text: text})
	}
	return out
}

// fedWatch is a watch without a socket, started: the test gives it the
// records its loop would read.
func fedWatch(opts LandlockOptions) *LandlockWatch {
	w := newLandlockWatch(opts)
	close(w.started)
	return w
}

// feed gives a watch (no socket) the captured records, as its loop
// would, and the pid of the agent that created its domains.
func feed(t *testing.T, agent int, max int) ([]ledger.Denial, []ledger.Denial, int) {
	t.Helper()
	var streamed []ledger.Denial
	w := fedWatch(LandlockOptions{ABI: 7, Max: max, OnDenial: func(d ledger.Denial) { streamed = append(streamed, d) }})
	w.AgentStarted(agent, 0) // no sandbox namespace: only the agent's domains
	for _, r := range captured(t) {
		w.add(r)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.flush()
	return w.list, streamed, w.dropped
}

// The run's denials are those of the domains its agent created: the
// records of a program outside the sandbox, in the same stream, are not.
func TestLandlockRecordsOfTheRunOnly(t *testing.T) {
	got, streamed, dropped := feed(t, 12389, 0)
	at := func(s string) time.Time { tm, _ := time.Parse(time.RFC3339Nano, s); return tm }
	want := []ledger.Denial{
		{Time: at("2026-12-01T14:34:29.236Z"), Layer: ledger.LayerLandlock, Syscall: "fs.make_reg", PID: 12389, Comm: "bash", Args: "path=/proc/18"},
		{Time: at("2026-12-01T14:34:29.236Z"), Layer: ledger.LayerLandlock, Syscall: "fs.write_file", PID: 12389, Comm: "bash", Args: "path=/proc/18/comm"},
		{Time: at("2026-12-01T14:34:29.240Z"), Layer: ledger.LayerLandlock, Syscall: "net.connect_tcp", PID: 12389, Comm: "bash", Args: "daddr=127.0.0.1 dest=9"},
	}
	if len(got) != len(want) {
		t.Fatalf("denials %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("denial %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	if len(streamed) != len(want) || streamed[2] != want[2] || dropped != 0 {
		t.Errorf("streamed %+v, dropped %d", streamed, dropped)
	}
}

// The other program's view: its three refusals, one of them in a
// directory whose name holds a space, which the kernel logs in hex.
func TestLandlockRecordsDecodeHexPaths(t *testing.T) {
	got, _, _ := feed(t, 13370, 0)
	var args []string
	for _, d := range got {
		args = append(args, d.Syscall+" "+d.Args)
		if d.PID != 13370 || d.Comm != "llchild" {
			t.Errorf("denial %+v: want pid 13370 (llchild)", d)
		}
	}
	want := "fs.make_reg path=/tmp/auditexp|fs.make_reg path=/tmp/auditexp/sp ace|net.connect_tcp daddr=127.0.0.1 dest=9"
	if strings.Join(args, "|") != want {
		t.Errorf("denials %q, want %q", strings.Join(args, "|"), want)
	}
}

// Beyond the cap, denials are counted, not kept.
func TestLandlockCap(t *testing.T) {
	got, streamed, dropped := feed(t, 12389, 2)
	if len(got) != 2 || len(streamed) != 2 || dropped != 1 {
		t.Errorf("kept %d, streamed %d, dropped %d; want 2, 2, 1", len(got), len(streamed), dropped)
	}
}

// An agent pid that created no domain of the stream: nothing is the run's.
func TestLandlockUnrelatedRecordsStayOut(t *testing.T) {
	if got, _, _ := feed(t, 1, 0); len(got) != 0 {
		t.Errorf("denials %+v, want none", got)
	}
}

// An event whose end never came (no AUDIT_EOE) still counts, at Stop.
func TestLandlockEventWithoutEnd(t *testing.T) {
	w := fedWatch(LandlockOptions{ABI: 7})
	w.AgentStarted(42, 0)
	w.add(auditRecord{auditLandlockAccess, `audit(1796135669.236:7): domain=abc blockers=fs.write_file path="/etc/passwd" dev="vda" ino=1`})
	w.add(auditRecord{auditLandlockDomain, `audit(1796135669.236:7): domain=abc status=allocated mode=enforcing pid=42 uid=0 exe="/x" comm="x"`})
	w.add(auditRecord{auditSyscall, `audit(1796135669.236:7): arch=c000003e syscall=257 success=no exit=-13 ppid=1 pid=43 comm="sh" exe="/bin/sh"`})
	w.flush()
	if len(w.list) != 1 || w.list[0].PID != 43 || w.list[0].Comm != "sh" || w.list[0].Args != "path=/etc/passwd" {
		t.Errorf("denials %+v", w.list)
	}
}

func TestParseRecord(t *testing.T) {
	tests := []struct {
		text string
		ok   bool
		want string // k=v|k=v
	}{
		{`audit(1796135669.240:17): domain=192c28b2b blockers=net.connect_tcp daddr=127.0.0.1 dest=9`, true, "domain=192c28b2b|blockers=net.connect_tcp|daddr=127.0.0.1|dest=9"},
		{`audit(1.5:2): path="a=b c" comm=6120"62`, true, "path=a=b c|comm=6120\"62"},
		{`audit(1.5:2): comm=6162`, true, "comm=ab"},
		{`audit(1.5:2): key=6162`, true, "key=6162"}, // not an untrusted string: as is
		{`audit(1.5:2): `, true, ""},
		{`audit(1.5:2): path="unterminated`, false, ""},
		{`nonsense`, false, ""},
		{`audit(x:2): a=b`, false, ""},
	}
	for _, tt := range tests {
		r, ok := parseRecord(tt.text)
		if ok != tt.ok {
			t.Errorf("%q: ok %v", tt.text, ok)
			continue
		}
		var kv []string
		for _, f := range r.fields {
			kv = append(kv, f[0]+"="+f[1])
		}
		if ok && strings.Join(kv, "|") != tt.want {
			t.Errorf("%q: %q, want %q", tt.text, strings.Join(kv, "|"), tt.want)
		}
	}
}

func TestLandlockUnreadable(t *testing.T) {
	for abi, want := range map[int]string{0: "no Landlock", 6: "ABI is 6", 7: ""} {
		got := landlockUnreadable(abi)
		if (want == "") != (got == "") || !strings.Contains(got, want) {
			t.Errorf("ABI %d: %q, want %q", abi, got, want)
		}
	}
	w := WatchLandlock(LandlockOptions{ABI: 6})
	if l := w.Stop().Layer; l.Logged || !strings.Contains(l.Detail, "ABI is 6") {
		t.Errorf("layer %+v", l)
	}
}
