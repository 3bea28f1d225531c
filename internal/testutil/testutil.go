// Package testutil holds the helpers that every agentbox test shares: the
// skip rules for tests that need root, a binary or a kernel feature.
//
// A skip is honest only when it can be seen. With AGENTBOX_TEST_STRICT=1 (set
// by CI), every Require* helper that would skip fails the test instead, so that
// no integration test can silently not run.
package testutil

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
)

// Strict reports whether AGENTBOX_TEST_STRICT=1 turns skips into failures.
func Strict() bool { return os.Getenv("AGENTBOX_TEST_STRICT") == "1" }

// Skip skips the test with reason, or fails it in strict mode.
func Skip(t testing.TB, reason string) {
	t.Helper()
	if Strict() {
		t.Fatalf("required for this test (AGENTBOX_TEST_STRICT=1): %s", reason)
	}
	t.Skip(reason)
}

// RequireRoot skips (or fails, in strict mode) unless the test runs as root.
func RequireRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		Skip(t, "needs root (run 'sudo make integration')")
	}
}

// RequireNonRoot skips (or fails, in strict mode) unless the test runs as an
// ordinary user; the rootless suite uses it.
func RequireNonRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() == 0 {
		Skip(t, "needs an unprivileged user (the rootless suite runs it through scripts/test-rootless)")
	}
}

// RequireBinary skips (or fails) unless name is on PATH, and returns its path.
func RequireBinary(t testing.TB, name, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		Skip(t, name+" not found on PATH (apt-get install "+pkg+")")
	}
	return p
}

// LockAccount holds, until the test ends, the machine-wide lock of the
// tests that create, use or remove the dedicated account agentbox-agent:
// they live in different packages, which go test runs at the same time.
func LockAccount(t testing.TB) {
	t.Helper()
	f, err := os.OpenFile("/run/agentbox-test-account.lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatalf("account lock: %v", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		t.Fatalf("account lock: %v", err)
	}
	t.Cleanup(func() { f.Close() })
}
