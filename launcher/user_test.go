//go:build linux

package launcher

import (
	"errors"
	"net"
	"path/filepath"
	"strconv"
	"testing"
)

func TestLockAccountRefusesASecondRun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "user-account.lock")
	first, err := lockAccount(path)
	if err != nil {
		t.Fatal(err)
	}
	var r *refusal
	if _, err := lockAccount(path); !errors.As(err, &r) {
		t.Fatalf("second lock: %v, want a refusal", err)
	}
	first.Close()
	again, err := lockAccount(path)
	if err != nil {
		t.Fatalf("after the first run ended: %v", err)
	}
	again.Close()
}

func TestFreeLoopbackPortIsFreeOnBothFamilies(t *testing.T) {
	port, err := freeLoopbackPort()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []struct{ network, host string }{{"tcp4", "127.0.0.1"}, {"tcp6", "::1"}} {
		l, err := net.Listen(a.network, net.JoinHostPort(a.host, strconv.Itoa(port)))
		if err != nil {
			t.Errorf("port %d on %s: %v", port, a.host, err)
			continue
		}
		l.Close()
	}
}
