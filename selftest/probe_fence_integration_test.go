//go:build integration && linux

package selftest

import (
	"bytes"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/agentbox/agentbox/internal/testutil"
)

// TestFenceProbes runs internet-unreachable and dns-unresolvable with fence
// targets in a network namespace this test made, as uid 65534 (the
// confined helper), first with no fence, where both must say ALLOW, then
// under the user engine's ruleset (its golden file, for uid 65534), where
// both must say DENY: a missing fence fails the self-test, which refuses
// the launch.
func TestFenceProbes(t *testing.T) {
	testutil.RequireRoot(t)
	if _, err := exec.LookPath("nft"); err != nil {
		testutil.Skip(t, "needs nft: apt-get install nftables")
	}
	golden, err := os.ReadFile("../engine/userengine/testdata/fence.nft")
	if err != nil {
		t.Fatal(err)
	}
	ruleset := strings.ReplaceAll(string(golden), "skuid 990", "skuid 65534")
	done := make(chan struct{})
	go func() {
		defer close(done)
		// This thread enters the new namespace and returns to the test's
		// own before it is unlocked. Ending the goroutine locked is not
		// enough: on the process's main thread Go keeps the thread, and
		// /proc/self/net, which is the main thread's, would show the test
		// namespace to every later test of the package.
		runtime.LockOSThread()
		orig, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			t.Errorf("open this thread's network namespace: %v", err)
			return
		}
		defer func() {
			if err := unix.Setns(int(orig.Fd()), unix.CLONE_NEWNET); err != nil {
				t.Errorf("return to the test's network namespace: %v", err)
			} else {
				runtime.UnlockOSThread()
			}
			orig.Close()
		}()
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			t.Errorf("unshare: %v", err)
			return
		}
		if err := loUp(); err != nil {
			t.Errorf("lo up: %v", err)
			return
		}
		var fence []NetCanary
		for _, a := range []struct{ network, addr string }{{"tcp4", "127.0.0.1:0"}, {"tcp6", "[::1]:0"}} {
			l, err := net.Listen(a.network, a.addr)
			if err != nil {
				t.Errorf("listen %s: %v", a.addr, err)
				return
			}
			defer l.Close()
			token := []byte("fence-canary")
			go func() {
				for {
					c, err := l.Accept()
					if err != nil {
						return
					}
					_, _ = c.Write(token)
					c.Close()
				}
			}()
			fence = append(fence, NetCanary{Addr: l.Addr().String(), TokenSHA256: SHA256(token)})
		}
		cfg := InitConfig{Version: ProtocolVersion, Probes: []string{"internet-unreachable", "dns-unresolvable"}, Targets: Targets{Fence: fence}}
		expectFence(t, cfg, Allow)
		load := exec.Command("nft", "-f", "-")
		load.Stdin = strings.NewReader(ruleset)
		if out, err := load.CombinedOutput(); err != nil {
			t.Errorf("load the fence: %v\n%s", err, out)
			return
		}
		expectFence(t, cfg, Deny)
	}()
	<-done
}

// expectFence runs the probes of cfg in the confined helper, started from
// this thread (so in its network namespace), and wants decision of each.
func expectFence(t *testing.T, cfg InitConfig, want Decision) {
	t.Helper()
	in, _ := json.Marshal(cfg)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = []string{helperEnv + "=confine", "PATH=/usr/bin:/bin"}
	cmd.Stdin, cmd.Stderr = bytes.NewReader(in), os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Errorf("helper: %v", err)
		return
	}
	n := 0
	for dec := json.NewDecoder(bytes.NewReader(out)); dec.More(); n++ {
		var r Result
		if err := dec.Decode(&r); err != nil {
			t.Fatal(err)
		}
		if r.Decision != want {
			t.Errorf("%s: %s %s, want %s (%s)", r.Probe, r.Decision, r.Observed, want, r.Detail)
		}
	}
	if n != 2 {
		t.Errorf("the helper reported %d results, want 2", n)
	}
}
