//go:build integration && linux

package launcher

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/agentbox/agentbox/internal/testutil"
)

// The test network lives in network namespaces this test makes and removes:
// a sandbox side and a test host, joined by a veth pair and addressed in
// 192.0.2.0/24 (TEST-NET-1, never routed). The test host has no other
// interface and no route, so nothing sent towards it can go further.
const (
	netSandboxAddr = "192.0.2.1"
	netTestHost    = "192.0.2.2"
)

// testNet names the namespaces of one test network.
type testNet struct {
	sandbox, host string
}

// newTestNet makes the sandbox side (lo up, eth0 with a default route via
// the test host) and the test host (lo up, eth0), and removes both when the
// test ends.
func newTestNet(t *testing.T) testNet {
	t.Helper()
	ip := testutil.RequireBinary(t, "ip", "iproute2")
	prefix := "abt-" + randomHex(t)[:8]
	n := testNet{sandbox: prefix + "-s", host: prefix + "-h"}
	for _, ns := range []string{n.host, n.sandbox} {
		mustRun(t, ip, "netns", "add", ns)
		t.Cleanup(func() {
			if out, err := exec.Command(ip, "netns", "del", ns).CombinedOutput(); err != nil {
				t.Errorf("ip netns del %s: %v: %s", ns, err, out)
			}
		})
	}
	mustRun(t, ip, "-n", n.sandbox, "link", "add", "eth0", "type", "veth", "peer", "name", "eth0", "netns", n.host)
	for ns, addr := range map[string]string{n.sandbox: netSandboxAddr, n.host: netTestHost} {
		mustRun(t, ip, "-n", ns, "addr", "add", addr+"/24", "dev", "eth0")
		mustRun(t, ip, "-n", ns, "link", "set", "lo", "up")
		mustRun(t, ip, "-n", ns, "link", "set", "eth0", "up")
	}
	mustRun(t, ip, "-n", n.sandbox, "route", "add", "default", "via", netTestHost)
	return n
}

// newDownNet makes a network namespace whose loopback stays down: no
// interface of it works.
func newDownNet(t *testing.T) string {
	t.Helper()
	ip := testutil.RequireBinary(t, "ip", "iproute2")
	ns := "abt-" + randomHex(t)[:8] + "-d"
	mustRun(t, ip, "netns", "add", ns)
	t.Cleanup(func() {
		if out, err := exec.Command(ip, "netns", "del", ns).CombinedOutput(); err != nil {
			t.Errorf("ip netns del %s: %v: %s", ns, err, out)
		}
	})
	return ns
}

func netnsPath(name string) string { return "/var/run/netns/" + name }

func mustRun(t *testing.T, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v: %s", name, strings.Join(args, " "), err, out)
	}
}

// inNetns runs fn on this goroutine's thread moved into the named network
// namespace: sockets fn opens and processes it starts live there. Go starts
// no new thread from a locked one, so nothing else leaks in. If the thread
// cannot be moved back, it stays locked and dies with the goroutine.
func inNetns(t *testing.T, name string, fn func()) {
	t.Helper()
	runtime.LockOSThread()
	orig, err := os.Open("/proc/thread-self/ns/net")
	if err != nil {
		runtime.UnlockOSThread()
		t.Fatal(err)
	}
	defer orig.Close()
	target, err := os.Open(netnsPath(name))
	if err != nil {
		runtime.UnlockOSThread()
		t.Fatal(err)
	}
	defer target.Close()
	if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
		runtime.UnlockOSThread()
		t.Fatalf("setns %s: %v", name, err)
	}
	defer func() {
		if err := unix.Setns(int(orig.Fd()), unix.CLONE_NEWNET); err != nil {
			t.Errorf("back to the test's network namespace: %v (the thread is dropped)", err)
			return
		}
		runtime.UnlockOSThread()
	}()
	fn()
}

// testHostServices starts, in the test host's namespace, a TCP listener
// that accepts and closes every connection, and a DNS responder on port 53
// that answers every query with an empty reply. It returns their addresses.
func testHostServices(t *testing.T, n testNet) (tcp, dns string) {
	t.Helper()
	inNetns(t, n.host, func() {
		l, err := net.Listen("tcp4", netTestHost+":0")
		if err != nil {
			t.Fatal(fmt.Errorf("test host listener: %w", err))
		}
		t.Cleanup(func() { l.Close() })
		go acceptAndClose(l)
		c, err := net.ListenPacket("udp4", netTestHost+":53")
		if err != nil {
			t.Fatal(fmt.Errorf("test host DNS responder: %w", err))
		}
		t.Cleanup(func() { c.Close() })
		go answerDNS(c)
		tcp, dns = l.Addr().String(), c.LocalAddr().String()
	})
	return tcp, dns
}

func acceptAndClose(l net.Listener) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		c.Close()
	}
}

// answerDNS returns each query's header with the response bit set and no
// records: any reply at all shows the resolver is reachable.
func answerDNS(c net.PacketConn) {
	buf := make([]byte, 512)
	for {
		n, from, err := c.ReadFrom(buf)
		if err != nil {
			return
		}
		if n >= 12 {
			buf[2] |= 0x80
			_, _ = c.WriteTo(buf[:12], from)
		}
	}
}

// networkSandbox is the hardened sandbox placed, with its launcher, in the
// sandbox side of the test network: it has eth0 and a default route, the
// launcher's loopback and abstract-socket canaries share its namespace,
// and the probes aim at the test host only.
func networkSandbox(t *testing.T, n testNet) probeSandbox {
	t.Helper()
	tcp, dns := testHostServices(t, n)
	return probeSandbox{
		targets: []string{"internet=" + tcp, "metadata=" + tcp, "dns=" + dns},
		weaken:  weakenAll(withNetns(netnsPath(n.sandbox))),
	}
}
