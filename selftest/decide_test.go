package selftest

import (
	"errors"
	"fmt"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func TestDecideSyscall(t *testing.T) {
	tests := []struct {
		err     error
		reached []unix.Errno
		want    Decision
		obs     string
	}{
		{nil, nil, Allow, "succeeded"},
		{unix.EPERM, []unix.Errno{unix.EFAULT}, Deny, "EPERM"},
		{unix.EACCES, nil, Deny, "EACCES"},
		{unix.ENOSYS, nil, Deny, "ENOSYS"},
		{unix.EFAULT, []unix.Errno{unix.EFAULT}, Allow, "EFAULT"},
		{unix.EFAULT, nil, Unknown, "EFAULT"}, // not a sign of permission for this call
		{unix.EBADF, []unix.Errno{unix.EBADF}, Allow, "EBADF"},
		{unix.EINVAL, []unix.Errno{unix.EFAULT}, Unknown, "EINVAL"},
		{fmt.Errorf("fork/exec: %w", unix.ENOENT), []unix.Errno{unix.ENOENT}, Allow, "ENOENT"},
		{errors.New("odd"), nil, Unknown, "odd"},
	}
	for _, tc := range tests {
		d, o := decideSyscall(tc.err, tc.reached...)
		if d != tc.want || o != tc.obs {
			t.Errorf("decideSyscall(%v, %v) = %s %s, want %s %s", tc.err, tc.reached, d, o, tc.want, tc.obs)
		}
	}
}

func TestDecideWriteRead(t *testing.T) {
	tests := []struct {
		err         error
		write, read Decision
		wobs, robs  string
	}{
		{nil, Allow, Allow, "writable", "readable"},
		{unix.EROFS, Deny, Unknown, "EROFS", "EROFS"},
		{unix.EACCES, Deny, Deny, "EACCES", "EACCES"},
		{unix.ENOENT, Deny, Deny, "absent", "absent"},
		{&os.PathError{Op: "open", Path: "/x", Err: unix.ENOENT}, Deny, Deny, "absent", "absent"},
		{unix.EIO, Unknown, Unknown, "EIO", "EIO"},
	}
	for _, tc := range tests {
		if d, o := decideWrite(tc.err); d != tc.write || o != tc.wobs {
			t.Errorf("decideWrite(%v) = %s %s, want %s %s", tc.err, d, o, tc.write, tc.wobs)
		}
		if d, o := decideRead(tc.err); d != tc.read || o != tc.robs {
			t.Errorf("decideRead(%v) = %s %s, want %s %s", tc.err, d, o, tc.read, tc.robs)
		}
	}
}

func TestDecideNetwork(t *testing.T) {
	route := []struct {
		err  error
		want Decision
		obs  string
	}{
		{nil, Allow, "route"},
		{unix.ENETUNREACH, Deny, "no-route"},
		{unix.EADDRNOTAVAIL, Deny, "no-route"},
		{unix.EAFNOSUPPORT, Deny, "no-route"},
		{unix.EPERM, Deny, "EPERM"},
		{unix.EIO, Unknown, "EIO"},
	}
	for _, tc := range route {
		if d, o := decideRoute(tc.err); d != tc.want || o != tc.obs {
			t.Errorf("decideRoute(%v) = %s %s, want %s %s", tc.err, d, o, tc.want, tc.obs)
		}
	}
	connect := []struct {
		err  error
		want Decision
		obs  string
	}{
		{nil, Allow, "connected"},
		{fmt.Errorf("dial: %w", unix.ECONNREFUSED), Allow, "refused-by-host"},
		{unix.ENETUNREACH, Deny, "no-route"},
		{unix.EACCES, Deny, "EACCES"},
		{timeoutErr{}, Unknown, "timeout"},
		{unix.EHOSTUNREACH, Unknown, "EHOSTUNREACH"},
	}
	for _, tc := range connect {
		if d, o := decideConnect(tc.err); d != tc.want || o != tc.obs {
			t.Errorf("decideConnect(%v) = %s %s, want %s %s", tc.err, d, o, tc.want, tc.obs)
		}
	}
	dns := []struct {
		err      error
		loopback bool
		want     Decision
	}{
		{nil, false, Allow},
		{unix.ECONNREFUSED, true, Deny},
		{timeoutErr{}, true, Deny},
		{timeoutErr{}, false, Unknown},
		{unix.ENETUNREACH, false, Deny},
	}
	for _, tc := range dns {
		if d, _ := decideDNS(tc.err, tc.loopback); d != tc.want {
			t.Errorf("decideDNS(%v, %v) = %s, want %s", tc.err, tc.loopback, d, tc.want)
		}
	}
}

func TestWorst(t *testing.T) {
	var w worst
	if o := w.outcome("x"); o.decision != Unknown || o.observed != "nothing-checked" {
		t.Errorf("empty: %+v", o)
	}
	w.add(Deny, "absent", "a")
	w.add(Unknown, "EIO", "b")
	if o := w.outcome("x"); o.decision != Unknown || o.observed != "EIO" {
		t.Errorf("deny+unknown: %+v", o)
	}
	w.add(Allow, "readable", "c")
	w.add(Allow, "mounted", "d")
	w.add(Deny, "absent", "e")
	w.otherwise("clean", "f")
	o := w.outcome("x")
	if o.decision != Allow || o.observed != "readable,mounted" || o.detail != "a; b; c; d; e" {
		t.Errorf("with allow: %+v", o)
	}
}

func TestStatusDecisions(t *testing.T) {
	zero := "0000000000000000"
	full := map[string]string{"CapEff": zero, "CapPrm": zero, "CapBnd": zero, "CapAmb": zero, "Seccomp": "2", "NoNewPrivs": "1"}
	if d, o := decideCapabilities(full); d != Deny || o != "none" {
		t.Errorf("caps zero: %s %s", d, o)
	}
	bnd := map[string]string{"CapEff": zero, "CapPrm": zero, "CapBnd": "0000000000000400", "CapAmb": zero}
	if d, o := decideCapabilities(bnd); d != Allow || o != "held:CapBnd" {
		t.Errorf("CapBnd held: %s %s", d, o)
	}
	if d, _ := decideCapabilities(map[string]string{"CapEff": zero}); d != Unknown {
		t.Errorf("missing fields: %s", d)
	}
	for v, want := range map[string]Decision{"2": Deny, "1": Deny, "0": Allow, "": Unknown} {
		if d, _ := decideSeccomp(map[string]string{"Seccomp": v}); d != want {
			t.Errorf("Seccomp %q: %s want %s", v, d, want)
		}
	}
	for v, want := range map[string]Decision{"1": Deny, "0": Allow, "": Unknown} {
		if d, _ := decideNoNewPrivs(map[string]string{"NoNewPrivs": v}); d != want {
			t.Errorf("NoNewPrivs %q: %s want %s", v, d, want)
		}
	}
}

func TestDecideIDMapInside(t *testing.T) {
	tests := []struct {
		m    []IDMapRange
		want Decision
		obs  string
	}{
		{[]IDMapRange{{0, 0, 4294967295}}, Allow, "identity"},
		{[]IDMapRange{{0, 0, 1}, {1, 100000, 65535}}, Allow, "root-maps-parent-root"},
		// rootless keep-id in an outer namespace: the agent on the parent's 0
		{[]IDMapRange{{0, 1, 1001}, {1001, 0, 1}, {1002, 1003, 64534}}, Deny, "maps-parent-root"},
		{[]IDMapRange{{0, 100000, 65536}}, Deny, "mapped"},
		{nil, Unknown, "empty"},
	}
	for _, tc := range tests {
		if d, o := decideIDMapInside(tc.m); d != tc.want || o != tc.obs {
			t.Errorf("decideIDMapInside(%v) = %s %s, want %s %s", tc.m, d, o, tc.want, tc.obs)
		}
	}
}

func TestDecideIDMap(t *testing.T) {
	tests := []struct {
		m    []IDMapRange
		want Decision
		obs  string
	}{
		{[]IDMapRange{{0, 0, 4294967295}}, Allow, "identity"},
		{[]IDMapRange{{0, 1000, 1}, {1, 0, 1}}, Allow, "host-root-mapped"},
		{[]IDMapRange{{0, 100000, 65536}}, Deny, "mapped"},
		{[]IDMapRange{{1000, 1000, 1}}, Deny, "mapped"},
		{nil, Unknown, "empty"},
	}
	for _, tc := range tests {
		if d, o := decideIDMap(tc.m); d != tc.want || o != tc.obs {
			t.Errorf("decideIDMap(%v) = %s %s, want %s %s", tc.m, d, o, tc.want, tc.obs)
		}
	}
}

func TestDecidePIDNamespace(t *testing.T) {
	tests := []struct {
		kthreads []int
		listed   bool
		self     map[string]string
		want     Decision
		obs      string
	}{
		{[]int{2}, true, map[string]string{"/proc": "7"}, Allow, "host-pid-namespace"},
		{nil, true, map[string]string{"/proc": "7"}, Deny, "own-pid-namespace"},
		{nil, true, map[string]string{"/proc": "7", "/host/proc": "812"}, Allow, "foreign-procfs"},
		{nil, false, nil, Unknown, "proc-unreadable"},
	}
	for _, tc := range tests {
		if d, o, _ := decidePIDNamespace(tc.kthreads, tc.listed, 7, tc.self); d != tc.want || o != tc.obs {
			t.Errorf("decidePIDNamespace(%v, %v, %v) = %s %s, want %s %s", tc.kthreads, tc.listed, tc.self, d, o, tc.want, tc.obs)
		}
	}
}

func TestDecideKallsymsAndDevices(t *testing.T) {
	if d, _ := decideKallsyms(100, 0); d != Deny {
		t.Errorf("zeroed kallsyms: %s", d)
	}
	if d, _ := decideKallsyms(100, 3); d != Allow {
		t.Errorf("visible kallsyms: %s", d)
	}
	chr, blk := uint32(unix.S_IFCHR), uint32(unix.S_IFBLK)
	tests := []struct {
		path  string
		mode  uint32
		rdev  uint64
		extra []string
		want  bool
	}{
		{"/dev/null", chr, unix.Mkdev(1, 3), nil, true},
		{"/dev/pts/3", chr, unix.Mkdev(136, 3), nil, true},
		{"/dev/mem", chr, unix.Mkdev(1, 1), nil, false},
		{"/dev/sda", blk, unix.Mkdev(8, 0), nil, false},
		{"/dev/fuse", chr, unix.Mkdev(10, 229), []string{"/dev/fuse"}, true},
		{"/dev/null2", blk, unix.Mkdev(1, 3), nil, false},
	}
	for _, tc := range tests {
		if got := allowedDevice(tc.path, tc.mode, tc.rdev, tc.extra); got != tc.want {
			t.Errorf("allowedDevice(%s) = %v, want %v", tc.path, got, tc.want)
		}
	}
}

func TestDecideGatewayRefusal(t *testing.T) {
	tests := []struct {
		status int
		err    error
		want   Decision
		obs    string
	}{
		{403, nil, Deny, "gateway-refused"},
		{200, nil, Allow, "gateway-tunnelled"},
		{502, nil, Unknown, "gateway-status-502"},
		{0, errors.New("connection refused"), Unknown, "gateway-unanswered"},
	}
	for _, tc := range tests {
		if d, o := decideGatewayRefusal(tc.status, tc.err); d != tc.want || o != tc.obs {
			t.Errorf("decideGatewayRefusal(%d, %v) = %s %s, want %s %s", tc.status, tc.err, d, o, tc.want, tc.obs)
		}
	}
}
