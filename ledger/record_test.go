package ledger

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

var t0 = time.Date(2025, 11, 29, 7, 44, 12, 123e6, time.UTC)

// fullRecord has every field set, as a finished run would.
func fullRecord() Record {
	return Record{
		RunID:          "20251129T074412.123Z-4f2a9c1b",
		Kind:           KindRun,
		Start:          t0,
		End:            t0.Add(3210 * time.Millisecond),
		Command:        []string{"claude", "-p", "fix the tests"},
		Agent:          "claude",
		PermissionMode: "acceptEdits",
		Digests:        Digests{Policy: "sha256:aa", Spec: "sha256:bb", Seccomp: "sha256:cc"},
		Findings: []Finding{
			{Code: "extra-writable-mount", Severity: "medium", Subject: "/data -> /data", Detail: "read-write bind outside the workspace", Fix: "bind it read-only", Accepted: true, Reason: "build cache"},
			{Code: "no-resource-limits", Severity: "low", Subject: "cpu", Fix: "set limits.cpu"},
		},
		Residuals: []Residual{{Code: "no-lsm-label", Detail: "neither SELinux nor AppArmor is enabled"}},
		Probes: []Probe{
			{Probe: "mount-tmpfs", Target: "/mnt", Expect: "DENY", Decision: "DENY", Observed: "EPERM", RunID: "20251129T074412.123Z-4f2a9c1b"},
			{Probe: "gateway-reachable", Target: "127.0.0.1:8080", Expect: "ALLOW", Decision: "UNKNOWN", Observed: "timeout"},
		},
		HostVerification: map[string]string{"uid_map": "0 100000 65536", "CapEff": "0000000000000000", "NoNewPrivs": "1"},
		Binds: []Bind{
			{Source: "/home/ana/src/app/node_modules", Kind: "install", ReadOnly: true, Why: "the command codex (/home/ana/src/app/node_modules/@openai/codex/bin/codex.js): the node_modules that holds the package"},
			{Source: "/srv/cache", Kind: "extra", ReadOnly: false},
		},
		Gateway: Gateway{Allowed: 12, Denied: 3},
		Denials: []Denial{
			{Time: t0.Add(time.Second), Layer: LayerSeccomp, Syscall: "mount", PID: 4242, Comm: "sh", Args: "source=x target=/tmp fstype=tmpfs flags=0x0"},
			{Time: t0.Add(2 * time.Second), Layer: LayerSeccomp, Syscall: "unshare", PID: 4243, Comm: "unshare\x1b[2J", Args: "flags=CLONE_NEWUSER"},
			{Time: t0.Add(3 * time.Second), Layer: LayerGateway, Args: "connect example.com:443: not in network.allow"},
		},
		DenialLayers: []DenialLayer{
			{Layer: LayerSeccomp, Logged: true, Probes: 9, Dropped: 2},
			{Layer: LayerLandlock, Logged: false, Detail: "the kernel's Landlock ABI is 6; audit records need 7"},
			{Layer: LayerGateway, Logged: true, Probes: 1},
		},
		Teardown: &Teardown{SurvivingPIDs: []int{4242}, Decision: DecisionResidue, Errors: []string{"killed 1 survivor"}},
		ExitCode: 0,
		Notes:    "first line\nsecond line",
	}
}

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run 'go test ./ledger -update' to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (-want +got), rerun with -update if intended:\n%s", path, diff)
	}
}

// TestRecordJSON pins the wire format: field names are the DESIGN.md §5
// contract that other tools read.
func TestRecordJSON(t *testing.T) {
	line, err := encode(fullRecord())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(string(line), "\n") != 1 {
		t.Fatalf("encoded record is not one line: %q", line)
	}
	var b bytes.Buffer
	if err := json.Indent(&b, line, "", "  "); err != nil {
		t.Fatal(err)
	}
	golden(t, "record.json", b.Bytes())

	var back Record
	if err := json.Unmarshal(line, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(fullRecord(), back); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

func TestMinimalRecordJSON(t *testing.T) {
	b, err := encode(Record{RunID: "r1", Kind: KindGC, Start: t0})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"run_id":"r1","kind":"gc","start":"2025-11-29T07:44:12.123Z","exit_code":0}` + "\n"
	if string(b) != want {
		t.Errorf("minimal record = %s, want %s", b, want)
	}
}

func TestVerdict(t *testing.T) {
	pass := Probe{Probe: "p", Expect: "DENY", Decision: "DENY"}
	tests := []struct {
		name string
		rec  Record
		want string
	}{
		{"empty", Record{}, VerdictOK},
		{"probes pass, findings accepted", Record{Probes: []Probe{pass}, Findings: []Finding{{Code: "x", Accepted: true}}}, VerdictOK},
		{"clean teardown", Record{Teardown: &Teardown{Decision: DecisionClean}}, VerdictOK},
		{"unaccepted finding", Record{Findings: []Finding{{Code: "x", Accepted: true}, {Code: "y"}}}, VerdictFindings},
		{"probe allowed what it should deny", Record{Probes: []Probe{pass, {Expect: "DENY", Decision: "ALLOW"}}}, VerdictProbeFailed},
		{"unknown probe fails", Record{Probes: []Probe{{Expect: "UNKNOWN", Decision: "UNKNOWN"}}}, VerdictProbeFailed},
		{"probe beats findings", Record{Probes: []Probe{{Expect: "ALLOW", Decision: "DENY"}}, Findings: []Finding{{Code: "y"}}}, VerdictProbeFailed},
		{"surviving pid", Record{Teardown: &Teardown{SurvivingPIDs: []int{1}}, Probes: []Probe{{Expect: "ALLOW", Decision: "DENY"}}}, VerdictTeardownDirty},
		{"mount left", Record{Teardown: &Teardown{RemainingMounts: []string{"/x"}}}, VerdictTeardownDirty},
		{"runtime state left", Record{Teardown: &Teardown{RuntimeStateLeft: []string{"abc"}}}, VerdictTeardownDirty},
		{"socket open", Record{Teardown: &Teardown{OpenSockets: []string{"/run/x.sock"}}}, VerdictTeardownDirty},
		{"exit code is not a verdict", Record{ExitCode: 17}, VerdictOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.rec.Verdict(); got != tt.want {
				t.Errorf("Verdict = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	ok := Record{RunID: "r1", Kind: KindRun, Start: t0}
	tests := []struct {
		name    string
		mutate  func(*Record)
		wantErr string
	}{
		{"valid", func(*Record) {}, ""},
		{"no run id", func(r *Record) { r.RunID = "" }, "run id"},
		{"path in run id", func(r *Record) { r.RunID = "../x" }, "run id"},
		{"unknown kind", func(r *Record) { r.Kind = "deploy" }, `kind "deploy"`},
		{"no start", func(r *Record) { r.Start = time.Time{} }, "no start time"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := ok
			tt.mutate(&r)
			err := r.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("err = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}

func TestRunID(t *testing.T) {
	a, b := newRunID(t0), newRunID(t0.Add(time.Millisecond))
	if !strings.HasPrefix(a, "20251129T074412.123Z-") || len(a) != len("20251129T074412.123Z-")+8 {
		t.Errorf("newRunID = %q, want 20251129T074412.123Z-XXXXXXXX", a)
	}
	if a >= b {
		t.Errorf("ids do not sort by time: %q >= %q", a, b)
	}
	seen := map[string]bool{}
	for range 1000 {
		id := newRunID(t0)
		if seen[id] {
			t.Fatalf("duplicate run id %q", id)
		}
		seen[id] = true
		if err := ValidRunID(id); err != nil {
			t.Fatal(err)
		}
	}
	if err := ValidRunID(NewRunID()); err != nil {
		t.Error(err)
	}
	if newRunID(t0.In(time.FixedZone("x", 3600)))[:20] != a[:20] {
		t.Error("run id time is not UTC")
	}
}

func TestVerdictOfAnError(t *testing.T) {
	r := Record{Error: "create: runc create: no such file", Teardown: &Teardown{Decision: DecisionClean}}
	if got := r.Verdict(); got != VerdictError {
		t.Errorf("verdict %q, want %q", got, VerdictError)
	}
	r.Teardown.Decision, r.Teardown.Errors = DecisionResidue, []string{"revoke /w: EPERM"}
	if got := r.Verdict(); got != VerdictTeardownDirty {
		t.Errorf("verdict %q with a cleanup residue, want %q", got, VerdictTeardownDirty)
	}
}

// A record written before teardown's errors had a field of their own
// reads with its decision and its errors apart; one of today reads as
// written.
func TestTeardownReadsBothShapes(t *testing.T) {
	for _, tc := range []struct {
		json string
		want Teardown
	}{
		{`{"cleanup":"clean"}`, Teardown{Decision: DecisionClean}},
		{`{"cleanup":"residue: [remove run directory: EBUSY]"}`, Teardown{Decision: DecisionResidue, Errors: []string{"[remove run directory: EBUSY]"}}},
		{`{"cleanup":"clean: [stop: x]"}`, Teardown{Decision: DecisionClean, Errors: []string{"[stop: x]"}}},
		{`{"cleanup":"residue","errors":["a","b"]}`, Teardown{Decision: DecisionResidue, Errors: []string{"a", "b"}}},
		{`{"cleanup":"left for gc: later"}`, Teardown{Decision: "left for gc: later"}},
	} {
		var got Teardown
		if err := json.Unmarshal([]byte(tc.json), &got); err != nil {
			t.Fatalf("%s: %v", tc.json, err)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.json, diff)
		}
	}
	if (Teardown{Decision: DecisionResidue}).Clean() || !(Teardown{Decision: DecisionClean}).Clean() {
		t.Error("Clean does not follow the decision")
	}
	if got := (Teardown{Decision: DecisionResidue, Errors: []string{"a", "b"}}).Summary(); got != "residue: a; b" {
		t.Errorf("summary %q", got)
	}
}
