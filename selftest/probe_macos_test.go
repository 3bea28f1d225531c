package selftest

import (
	"net"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"golang.org/x/sys/unix"
)

// darwin's catalog is Linux's plus its own probes; every other OS's has
// none of them.
func TestCatalogForDarwin(t *testing.T) {
	linux, darwin := CatalogFor("linux"), CatalogFor("darwin")
	var own []string
	for _, p := range darwinProbes() {
		own = append(own, p.Name)
		if slices.ContainsFunc(linux, func(q Probe) bool { return q.Name == p.Name }) {
			t.Errorf("linux's catalog holds darwin's %s", p.Name)
		}
	}
	if len(darwin) != len(linux)+len(own) {
		t.Errorf("darwin's catalog has %d probes, want linux's %d and its own %v", len(darwin), len(linux), own)
	}
	for _, p := range darwinProbes() {
		if p.Summary == "" || p.Expect != Deny {
			t.Errorf("%s: summary %q, expect %s", p.Name, p.Summary, p.Expect)
		}
	}
}

func runProbe(t *testing.T, p Probe) Result {
	t.Helper()
	return p.Run(&Env{Config: &InitConfig{RunID: "R"}})
}

// On Linux no Seatbelt profile stands in the way: a world-writable
// directory takes the file (ALLOW), and a directory whose mode refuses
// anyway is not tried, which leaves nothing to decide by (UNKNOWN).
func TestSeatbeltWriteProbe(t *testing.T) {
	open, closed := t.TempDir(), t.TempDir()
	if err := os.Chmod(open, 0o1777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(closed, 0o755); err != nil {
		t.Fatal(err)
	}
	if r := runProbe(t, seatbeltWriteProbe([]string{open, filepath.Join(open, "missing")})); r.Decision != Allow || r.Observed != "created" {
		t.Errorf("world-writable directory without Seatbelt: %s %s (%s)", r.Decision, r.Observed, r.Detail)
	}
	if entries, _ := os.ReadDir(open); len(entries) != 0 {
		t.Errorf("the probe left %v behind", entries)
	}
	if r := runProbe(t, seatbeltWriteProbe([]string{closed})); r.Decision != Unknown || r.Observed != "no-world-writable-dir" {
		t.Errorf("no world-writable directory: %s %s (%s)", r.Decision, r.Observed, r.Detail)
	}
	for err, want := range map[error]Decision{nil: Allow, unix.EPERM: Deny, unix.EACCES: Unknown, unix.EROFS: Unknown} {
		if d, o := decideSeatbeltWrite(err); d != want {
			t.Errorf("decideSeatbeltWrite(%v) = %s %s, want %s", err, d, o, want)
		}
	}
}

// A node the caller may open is ALLOW; nodes that do not exist leave
// nothing to decide by; the errnos decide as the comment says.
func TestBPFDeviceProbe(t *testing.T) {
	dir := t.TempDir()
	node := filepath.Join(dir, "bpf0")
	if err := os.WriteFile(node, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if r := runProbe(t, bpfDeviceProbe([]string{filepath.Join(dir, "bpf9"), node})); r.Decision != Allow || r.Observed != "opened" {
		t.Errorf("openable node: %s %s (%s)", r.Decision, r.Observed, r.Detail)
	}
	if r := runProbe(t, bpfDeviceProbe([]string{filepath.Join(dir, "bpf9")})); r.Decision != Unknown || r.Observed != "no-bpf-node" {
		t.Errorf("no node: %s %s", r.Decision, r.Observed)
	}
	for err, want := range map[error]Decision{nil: Allow, unix.EBUSY: Allow, unix.EPERM: Deny, unix.EACCES: Deny, unix.ENXIO: Unknown} {
		if d, o := decideBPFOpen(err); d != want {
			t.Errorf("decideBPFOpen(%v) = %s %s, want %s", err, d, o, want)
		}
	}
}

// A listening socket is reached (ALLOW), so is one nobody listens on
// (the connect passed every permission check); a missing one is UNKNOWN.
func TestMDNSResponderProbe(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "mDNSResponder")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	if r := runProbe(t, mdnsResponderProbe(sock)); r.Decision != Allow || r.Observed != "connected" {
		t.Errorf("listening: %s %s (%s)", r.Decision, r.Observed, r.Detail)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	l.Close()
	if r := runProbe(t, mdnsResponderProbe(sock)); r.Decision != Allow || r.Observed != "refused-after-permission" {
		t.Errorf("no listener: %s %s (%s)", r.Decision, r.Observed, r.Detail)
	}
	if r := runProbe(t, mdnsResponderProbe(filepath.Join(dir, "none"))); r.Decision != Unknown || r.Observed != "absent" {
		t.Errorf("absent: %s %s", r.Decision, r.Observed)
	}
	for err, want := range map[error]Decision{unix.EPERM: Deny, unix.EACCES: Deny, unix.ETIMEDOUT: Unknown} {
		if d, o := decideResolverConnect(err); d != want {
			t.Errorf("decideResolverConnect(%v) = %s %s, want %s", err, d, o, want)
		}
	}
}
