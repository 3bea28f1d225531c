package selftest

import (
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseMountinfo(t *testing.T) {
	b := []byte("36 35 98:0 /mnt\\040dir /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue\n" +
		"37 36 0:5 / /dev rw - devtmpfs udev rw\n" +
		// A workspace named by its publisher: a space, a newline, a tab and a
		// backslash in the paths, an escape at the very end of one.
		"38 36 8:2 /src/a\\134b /work/my\\040repo/new\\012line\\011x\\040 ro,nosuid shared:4 master:1 - ext4 /dev/sda\\0402 rw\n")
	got, err := ParseMountinfo(b)
	if err != nil {
		t.Fatal(err)
	}
	want := []Mount{
		{ID: 36, Parent: 35, Dev: "98:0", Root: "/mnt dir", MountPoint: "/mnt2", Options: "rw,noatime", FSType: "ext3", Source: "/dev/root"},
		{ID: 37, Parent: 36, Dev: "0:5", Root: "/", MountPoint: "/dev", Options: "rw", FSType: "devtmpfs", Source: "udev"},
		{ID: 38, Parent: 36, Dev: "8:2", Root: `/src/a\b`, MountPoint: "/work/my repo/new\nline\tx ", Options: "ro,nosuid", FSType: "ext4", Source: "/dev/sda 2"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if !got[2].hasOption("nosuid") || got[2].hasOption("nosu") {
		t.Errorf("hasOption on %q", got[2].Options)
	}
	for _, bad := range []string{
		"36 35 98:0 / /x rw no-separator\n",
		"36 35 98:0 / /x rw shared:1 master:2 no separator here\n",
		"36 35 98 / /x rw - ext4 /dev/sda1 rw\n",
	} {
		if _, err := ParseMountinfo([]byte(bad)); err == nil {
			t.Errorf("malformed line accepted: %q", bad)
		}
	}
	if got, err := ParseMountinfo(nil); err != nil || got != nil {
		t.Errorf("empty table: %v, %v", got, err)
	}
}

func TestParseSmallFiles(t *testing.T) {
	st := ParseStatus([]byte("Name:\tsh\nCapEff:\t0000000000000000\nNSpid:\t10\t1\n"))
	if st["CapEff"] != "0000000000000000" || st["NSpid"] != "10\t1" {
		t.Errorf("ParseStatus: %v", st)
	}
	m, err := ParseIDMap([]byte("         0     100000      65536\n      1000       1000          1\n"))
	if err != nil || cmp.Diff([]IDMapRange{{0, 100000, 65536}, {1000, 1000, 1}}, m) != "" {
		t.Errorf("ParseIDMap: %v %v", m, err)
	}
	if _, err := ParseIDMap([]byte("0 0\n")); err == nil {
		t.Error("ParseIDMap accepted a short line")
	}
	unixTxt := "Num       RefCount Protocol Flags    Type St Inode Path\n" +
		"0000000000000000: 00000002 00000000 00010000 0001 01 20 /run/docker.sock\n" +
		"0000000000000000: 00000002 00000000 00010000 0001 01 21 @agentbox-canary\n" +
		"0000000000000000: 00000002 00000000 00000000 0002 01 22\n"
	if got := parseUnixPaths([]byte(unixTxt)); cmp.Diff([]string{"/run/docker.sock", "@agentbox-canary"}, got) != "" {
		t.Errorf("parseUnixPaths: %v", got)
	}
	dev, _ := os.ReadFile("testdata/probe/self/net/dev")
	if got := parseNetDev(dev); cmp.Diff([]string{"lo", "eth0"}, got) != "" {
		t.Errorf("parseNetDev: %v", got)
	}
	if got := parseNameservers([]byte("# x\nnameserver 127.0.0.53\nsearch lan\nnameserver fd00::1\n")); cmp.Diff([]string{"127.0.0.53", "fd00::1"}, got) != "" {
		t.Errorf("parseNameservers: %v", got)
	}
}

func TestDefaultRoutes(t *testing.T) {
	route4 := "Iface\tDestination\tGateway\tFlags\tRefCnt\tUse\tMetric\tMask\tMTU\tWindow\tIRTT\n" +
		"eth0\t00000000\t010200C0\t0003\t0\t0\t0\t00000000\t0\t0\t0\n"
	if !hasDefaultRoute4([]byte(route4)) {
		t.Error("IPv4 default route not seen")
	}
	if hasDefaultRoute4([]byte("Iface\tDestination\n")) {
		t.Error("IPv4 default route seen in an empty table")
	}
	zero := "00000000000000000000000000000000"
	def6 := zero + " 00 " + zero + " 00 fd000000000000000000000000000001 00000400 00000001 00000000 00000003 eth0\n"
	unreach6 := zero + " 00 " + zero + " 00 " + zero + " ffffffff 00000001 00000000 00200200 lo\n"
	if !hasDefaultRoute6([]byte(def6)) {
		t.Error("IPv6 default route not seen")
	}
	if hasDefaultRoute6([]byte(unreach6)) {
		t.Error("the unreachable placeholder counted as a default route")
	}
}

func TestWithinAndVisibleAt(t *testing.T) {
	for _, tc := range []struct {
		p, dir string
		want   bool
	}{{"/a/b", "/a", true}, {"/a", "/a", true}, {"/ab", "/a", false}, {"/x", "/", true}, {"/a", "/a/b", false}} {
		if got := within(tc.p, tc.dir); got != tc.want {
			t.Errorf("within(%q, %q) = %v", tc.p, tc.dir, got)
		}
	}
	mounts := []Mount{
		{Dev: "8:2", Root: "/ana", MountPoint: "/host-home"},
		{Dev: "8:2", Root: "/ana/.ssh", MountPoint: "/root/.ssh"},
		{Dev: "8:1", Root: "/ana", MountPoint: "/other-fs"},
	}
	whole, part := visibleAt(mounts, HostPath{Path: "/home/ana", Dev: "8:2", FSPath: "/ana"})
	if cmp.Diff([]string{"/host-home"}, whole) != "" || cmp.Diff([]string{"/root/.ssh"}, part) != "" {
		t.Errorf("visibleAt home: %v %v", whole, part)
	}
	whole, _ = visibleAt(mounts, HostPath{Path: "/home/ana/.ssh/canary", Dev: "8:2", FSPath: "/ana/.ssh/canary"})
	if cmp.Diff([]string{"/host-home/.ssh/canary", "/root/.ssh/canary"}, whole) != "" {
		t.Errorf("visibleAt file: %v", whole)
	}
}
