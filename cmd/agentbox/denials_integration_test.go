//go:build integration && linux

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/agentbox/agentbox/denials"
	"github.com/agentbox/agentbox/internal/testutil"
	"github.com/agentbox/agentbox/ledger"
	"github.com/agentbox/agentbox/selftest"
)

// helperSyscalls makes the test binary, inside the sandbox, try each
// logged syscall it is given and one allowed one.
const helperSyscalls = "syscalls"

// attempts are the calls the helper makes, each with arguments that make
// it fail harmlessly should the filter ever let it through.
var attempts = map[string]func() unix.Errno{
	"mount": func() unix.Errno {
		src, _ := unix.BytePtrFromString("agentbox-denial")
		dst, _ := unix.BytePtrFromString("/tmp")
		fs, _ := unix.BytePtrFromString("tmpfs")
		_, _, e := unix.Syscall6(unix.SYS_MOUNT, uintptr(unsafe.Pointer(src)), uintptr(unsafe.Pointer(dst)), uintptr(unsafe.Pointer(fs)), 0, 0, 0)
		return e
	},
	"unshare": func() unix.Errno { _, _, e := unix.Syscall(unix.SYS_UNSHARE, unix.CLONE_NEWUSER, 0, 0); return e },
	"ptrace": func() unix.Errno {
		_, _, e := unix.Syscall6(unix.SYS_PTRACE, unix.PTRACE_ATTACH, 1, 0, 0, 0, 0)
		return e
	},
	"bpf":            func() unix.Errno { _, _, e := unix.Syscall(unix.SYS_BPF, ^uintptr(0), 0, 0); return e },
	"keyctl":         func() unix.Errno { _, _, e := unix.Syscall(unix.SYS_KEYCTL, ^uintptr(0), 0, 0); return e },
	"finit_module":   func() unix.Errno { _, _, e := unix.Syscall(unix.SYS_FINIT_MODULE, ^uintptr(0), 0, 0); return e },
	"setns":          func() unix.Errno { _, _, e := unix.Syscall(unix.SYS_SETNS, ^uintptr(0), 0, 0); return e },
	"userfaultfd":    func() unix.Errno { _, _, e := unix.Syscall(unix.SYS_USERFAULTFD, 0, 0, 0); return e },
	"io_uring_setup": func() unix.Errno { _, _, e := unix.Syscall(unix.SYS_IO_URING_SETUP, 0, 0, 0); return e },
	// Allowed: it must never appear in the log.
	"getppid": func() unix.Errno { _, _, e := unix.Syscall(unix.SYS_GETPPID, 0, 0, 0); return e },
	// Landlock's: /proc is mounted read-write but in the ruleset read-only,
	// so writing this process's own comm is refused by Landlock alone (no
	// O_CREAT: one access, fs.write_file); TCP connects only to the
	// gateway's port, so the discard port on the sandbox's own loopback is
	// refused before any packet.
	"landlock-write": func() unix.Errno {
		fd, err := unix.Open("/proc/self/comm", unix.O_WRONLY|unix.O_CLOEXEC, 0)
		if err == nil {
			unix.Close(fd)
		}
		return errnoOf(err)
	},
	"landlock-connect": func() unix.Errno {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return errnoOf(err)
		}
		defer unix.Close(fd)
		return errnoOf(unix.Connect(fd, &unix.SockaddrInet4{Port: 9, Addr: [4]byte{127, 0, 0, 1}}))
	},
	// The gateway's: a route it does not have, asked over the sandbox's
	// one way out. EACCES stands for "refused" (a 4xx answer).
	"gateway-refused": func() unix.Errno {
		c, err := net.Dial("tcp", strings.TrimPrefix(os.Getenv("AGENTBOX_GATEWAY_URL"), "http://"))
		if err != nil {
			return errnoOf(err)
		}
		defer c.Close()
		if _, err := c.Write([]byte("GET /agentbox-no-such-route HTTP/1.0\r\nHost: gateway\r\n\r\n")); err != nil {
			return errnoOf(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			return unix.EIO
		}
		resp.Body.Close()
		if resp.StatusCode >= 400 && resp.StatusCode < 500 {
			return unix.EACCES
		}
		return 0
	},
	// Allowed by Landlock: the workspace is writable.
	"workspace-write": func() unix.Errno {
		fd, err := unix.Open("landlock-allowed.txt", unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o644)
		if err == nil {
			unix.Close(fd)
		}
		return errnoOf(err)
	},
}

func errnoOf(err error) unix.Errno {
	if err == nil {
		return 0
	}
	var e unix.Errno
	if errors.As(err, &e) {
		return e
	}
	return unix.EINVAL
}

// trySyscalls is the sandbox side: one name=ERRNO line per call.
func trySyscalls(names []string) int {
	for _, n := range names {
		f, ok := attempts[n]
		if !ok {
			fmt.Printf("%s=unknown\n", n)
			continue
		}
		e := f()
		if e == 0 {
			fmt.Printf("%s=ok\n", n)
		} else {
			fmt.Printf("%s=%s\n", n, unix.ErrnoName(e))
		}
	}
	return 0
}

var logged = []string{"mount", "unshare", "ptrace", "bpf", "keyctl", "finit_module", "setns", "userfaultfd", "io_uring_setup"}

// Each logged syscall the agent tries fails with EPERM and appears once in
// the record's denials, named, with the caller's pid and command name; the
// allowed one never does; the self-test probes' attempts are counted
// apart. The same denials stream on --evidence as they happen.
func TestDenialLogRecordsEachAttempt(t *testing.T) { denialLogRecordsEachAttempt(t, "runc") }

// The same on crun, as root only (as TestCrunBoundaryAsRoot).
func TestDenialLogRecordsEachAttemptOnCrunAsRoot(t *testing.T) {
	testutil.RequireRoot(t)
	denialLogRecordsEachAttempt(t, "crun")
}

func denialLogRecordsEachAttempt(t *testing.T, runtime string) {
	for _, rt := range []string{runtime} {
		t.Run(rt, func(t *testing.T) {
			testutil.RequireBinary(t, rt, rt)
			rec, stdout, streamed := runAttempts(t, rt, append(slices.Clone(logged), "getppid"))
			obs := observations(stdout)
			for _, n := range logged {
				if obs[n] != "EPERM" {
					t.Errorf("%s inside the sandbox: %q, want EPERM", n, obs[n])
				}
			}
			if obs["getppid"] != "ok" {
				t.Errorf("getppid: %q, want ok", obs["getppid"])
			}
			seccomp := layer(t, rec, ledger.LayerSeccomp)
			if !seccomp.Logged || seccomp.Probes == 0 {
				t.Errorf("seccomp layer %+v: want logged, with the probes' attempts counted", seccomp)
			}
			var got []string
			for _, d := range rec.Denials {
				if d.Layer != ledger.LayerSeccomp {
					continue
				}
				got = append(got, d.Syscall)
				if d.PID <= 0 || d.Comm == "" || d.Time.IsZero() {
					t.Errorf("denial %+v lacks its pid, command name or time", d)
				}
				if d.Syscall == "mount" && d.Args != "source=agentbox-denial target=/tmp fstype=tmpfs flags=0x0" {
					t.Errorf("mount's summary: %q", d.Args)
				}
			}
			if !slices.Equal(got, logged) {
				t.Errorf("seccomp denials %v, want each attempt once, in order: %v", got, logged)
			}
			if !slices.Equal(streamed, logged) {
				t.Errorf("--evidence streamed %v, want %v", streamed, logged)
			}
		})
	}
}

// A run that tries nothing has an empty list, the layer still logged.
func TestDenialLogOfAQuietRunIsEmpty(t *testing.T) {
	rec, _, streamed := runAttempts(t, "runc", []string{"getppid"})
	if len(rec.Denials) != 0 || len(streamed) != 0 {
		t.Errorf("denials %+v, streamed %v: want none", rec.Denials, streamed)
	}
	if l := layer(t, rec, ledger.LayerSeccomp); !l.Logged {
		t.Errorf("seccomp layer %+v: want logged", l)
	}
	if l := layer(t, rec, ledger.LayerLandlock); !l.Logged && l.Detail == "" {
		t.Errorf("landlock layer %+v: not logged, without the reason", l)
	}
}

// A request the gateway refuses, made by the agent, is in the record once
// as layer gateway, naming what was asked, and streams on --evidence as it
// happens, as the kernel layers' denials do.
func TestDenialLogStreamsGatewayRefusals(t *testing.T) {
	rec, stdout, streamed := runAttempts(t, "runc", []string{"gateway-refused", "getppid"})
	if obs := observations(stdout); obs["gateway-refused"] != "EACCES" {
		t.Fatalf("gateway-refused inside the sandbox: %q, want a 4xx answer (EACCES)\n%s", obs["gateway-refused"], stdout)
	}
	var got []ledger.Denial
	for _, d := range rec.Denials {
		if d.Layer == ledger.LayerGateway {
			got = append(got, d)
		}
	}
	if len(got) != 1 || !strings.Contains(got[0].Args, "/agentbox-no-such-route") {
		t.Errorf("gateway denials %+v: want the one refused route", got)
	}
	if !slices.Equal(streamed, []string{ledger.LayerGateway}) {
		t.Errorf("--evidence streamed %v, want the gateway's refusal once", streamed)
	}
	if l := layer(t, rec, ledger.LayerGateway); !l.Logged {
		t.Errorf("gateway layer %+v: want logged", l)
	}
}

// The self-test's probes try mount and the rest on purpose: a selftest
// record counts them and lists none.
func TestSelftestProbeDenialsAreCountedNotListed(t *testing.T) {
	env := isolatedEnv(t)
	r := runIn(t, env, shortTempDir(t, "abs-"), "selftest")
	if r.code != 0 {
		t.Fatalf("selftest exit %d\n%s", r.code, r.stderr)
	}
	rec := lastRecord(t, env)
	if rec.Kind != ledger.KindSelftest || len(rec.Denials) != 0 {
		t.Errorf("selftest record: kind %s, %d denials listed; want none", rec.Kind, len(rec.Denials))
	}
	if l := layer(t, rec, ledger.LayerSeccomp); onRunsc() && (l.Logged || !strings.Contains(l.Detail, "runsc")) {
		t.Errorf("seccomp layer %+v: under gVisor nothing hands agentbox the filter's notifications: want not logged, and why", l) // docs/gvisor.md
	} else if !onRunsc() && (!l.Logged || l.Probes == 0) {
		t.Errorf("seccomp layer %+v: want the probes' attempts counted", l)
	}
}

var landlockAttempts = []string{"landlock-write", "landlock-connect", "workspace-write", "getppid"}

// With kernel auditing on (the test turns it on for its duration and puts
// the previous state back), a write and a connect that Landlock refuses
// are each in the record once, as layer landlock, with what was refused,
// the caller's pid and command name; the allowed write is not. With it
// off, the layer says so and how to turn it on.
func TestDenialLogRecordsLandlockAsRoot(t *testing.T) {
	testutil.RequireRoot(t)
	testutil.RequireBinary(t, "runc", "runc")
	if abi := selftest.LandlockABI(); abi < denials.LandlockLogABI {
		testutil.Skip(t, fmt.Sprintf("the kernel's Landlock ABI is %d; audit records need %d", abi, denials.LandlockLogABI))
	}
	was, err := denials.SetAuditEnabled(false)
	if err != nil {
		testutil.Skip(t, "cannot set kernel auditing: "+err.Error())
	}
	t.Cleanup(func() {
		if _, err := denials.SetAuditEnabled(was); err != nil {
			t.Errorf("putting kernel auditing back (enabled=%v): %v", was, err)
		}
	})

	rec, _, _ := runAttempts(t, "runc", landlockAttempts)
	if l := layer(t, rec, ledger.LayerLandlock); l.Logged || !strings.Contains(l.Detail, "kernel audit is disabled (enable: auditctl -e 1, or boot with audit=1)") {
		t.Errorf("audit off: landlock layer %+v, want not logged because auditing is off", l)
	}

	if _, err := denials.SetAuditEnabled(true); err != nil {
		t.Fatal(err)
	}
	rec, stdout, streamed := runAttempts(t, "runc", landlockAttempts)
	obs := observations(stdout)
	if obs["landlock-write"] != "EACCES" || obs["landlock-connect"] != "EACCES" || obs["workspace-write"] != "ok" {
		t.Fatalf("inside the sandbox: %v, want both Landlock attempts EACCES and the workspace write ok", obs)
	}
	if l := layer(t, rec, ledger.LayerLandlock); !l.Logged || l.Detail != "" {
		t.Errorf("landlock layer %+v, want logged without remarks", l)
	}
	var got []string
	for _, d := range rec.Denials {
		if d.Layer != ledger.LayerLandlock {
			continue
		}
		got = append(got, d.Syscall)
		if d.PID <= 0 || d.Comm != "connect" || d.Time.IsZero() {
			t.Errorf("denial %+v: want the helper's pid, its command name (connect) and a time", d)
		}
		switch d.Syscall {
		case "fs.write_file":
			if !regexp.MustCompile(`^path=/proc/[0-9]+/comm$`).MatchString(d.Args) {
				t.Errorf("the write's object: %q, want path=/proc/PID/comm", d.Args)
			}
		case "net.connect_tcp":
			if d.Args != "daddr=127.0.0.1 dest=9" {
				t.Errorf("the connect's object: %q", d.Args)
			}
		}
		if strings.Contains(d.Args, "landlock-allowed") {
			t.Errorf("the allowed write is in the log: %+v", d)
		}
	}
	if want := []string{"fs.write_file", "net.connect_tcp"}; !slices.Equal(got, want) {
		t.Errorf("landlock denials %v, want each refusal once: %v", got, want)
	}
	var streamedLL []string
	for _, s := range streamed {
		if strings.Contains(s, ".") {
			streamedLL = append(streamedLL, s)
		}
	}
	if !slices.Equal(streamedLL, got) {
		t.Errorf("--evidence streamed %v, want %v", streamedLL, got)
	}
}

// runAttempts runs the helper in a sandbox with runtime rt and returns the
// record, the helper's stdout and the syscalls streamed on --evidence.
func runAttempts(t *testing.T, rt string, names []string) (ledger.Record, string, []string) {
	t.Helper()
	uid, gid := testUser(t)
	ws := workspaceOwnedBy(t, uid, gid)
	env := isolatedEnv(t)
	helper := connectHelper(t)
	evidence := filepath.Join(t.TempDir(), "evidence.jsonl")
	args := []string{
		"run", "--runtime", rt, "--evidence", evidence, "--ro-bind", filepath.Dir(helper), "--",
		"env", "AGENTBOX_BIN=unused", helperEnv + "=" + helperSyscalls, helper,
	}
	r := runIn(t, env, ws, append(args, names...)...)
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	data, err := os.ReadFile(evidence)
	if err != nil {
		t.Fatal(err)
	}
	var streamed []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ev struct {
			Event  string
			Denial ledger.Denial
		}
		if json.Unmarshal(sc.Bytes(), &ev) == nil && ev.Event == "denial" {
			name := ev.Denial.Syscall
			if name == "" {
				name = ev.Denial.Layer // the gateway's name no syscall
			}
			streamed = append(streamed, name)
		}
	}
	_, rec := evidenceLines(t, data)
	if ledgerRec := lastRecord(t, env); ledgerRec.RunID != rec.RunID || len(ledgerRec.Denials) != len(rec.Denials) {
		t.Errorf("the ledger's record (%s, %d denials) is not the evidence's (%s, %d)", ledgerRec.RunID, len(ledgerRec.Denials), rec.RunID, len(rec.Denials))
	}
	show := runIn(t, env, ws, "show", rec.RunID)
	for _, d := range rec.Denials {
		if !strings.Contains(show.stdout, d.Syscall+" ") {
			t.Errorf("agentbox show lacks the %s denial:\n%s", d.Syscall, show.stdout)
		}
	}
	runs := runIn(t, env, ws, "runs")
	if !strings.Contains(runs.stdout, "DENIALS") || !strings.Contains(runs.stdout, fmt.Sprintf(" %s ", rec.DenialCount())) {
		t.Errorf("agentbox runs does not show %s denials:\n%s", rec.DenialCount(), runs.stdout)
	}
	return rec, r.stdout, streamed
}

func layer(t *testing.T, rec ledger.Record, name string) ledger.DenialLayer {
	t.Helper()
	for _, l := range rec.DenialLayers {
		if l.Layer == name {
			return l
		}
	}
	t.Fatalf("record %s has no %s layer: %+v", rec.RunID, name, rec.DenialLayers)
	return ledger.DenialLayer{}
}
