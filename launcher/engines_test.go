package launcher

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/policy"
)

// A containerd address from a policy is used only where no one but root
// or the invoking user could have put the socket: a daemon there is handed
// the sandbox's spec, and reports the pids the host's checks read.
func TestPolicyEngineRefusesASocketOthersControl(t *testing.T) {
	euid := uint32(os.Geteuid())
	mine := t.TempDir()
	open := filepath.Join(t.TempDir(), "open")
	if err := os.Mkdir(open, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	if _, _, err := policyEngine(policy.Policy{Engine: EngineContainerd, Address: filepath.Join(mine, "c.sock")}, euid); err != nil && !errors.Is(err, ErrEngineElsewhere) {
		t.Errorf("a socket path in a directory of mine (not there yet): %v", err)
	}
	_, _, err := policyEngine(policy.Policy{Engine: EngineContainerd, Address: filepath.Join(open, "c.sock")}, euid)
	if err == nil || !strings.Contains(err.Error(), "writable by group or others") {
		t.Errorf("a socket in a world-writable directory: %v, want refused", err)
	}
	f := filepath.Join(mine, "theirs.sock")
	if err := os.WriteFile(f, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if euid == 0 {
		if err := os.Chown(f, 4242, 4242); err != nil {
			t.Fatal(err)
		}
	}
	_, _, err = policyEngine(policy.Policy{Engine: EngineContainerd, Address: f}, euid+1)
	if err == nil || !strings.Contains(err.Error(), "neither root nor you") {
		t.Errorf("a socket owned by another user: %v, want refused", err)
	}
	if _, note, err := policyEngine(policy.Policy{}, euid); err != nil || !strings.HasPrefix(note, "runtime: ") {
		t.Errorf("the default engine: %q, %v", note, err)
	}
}

// An --isolation user run runs on no engine: a policy's engine: containerd
// opens no daemon for it (its socket is not even judged), and the record's
// note says so instead of naming the daemon.
func TestPolicyEngineOfAUserRunIsNone(t *testing.T) {
	_, note, err := policyEngine(policy.Policy{Isolation: policy.IsolationUser, Engine: EngineContainerd, Address: "/nonexistent/dir/c.sock"}, uint32(os.Geteuid()))
	if err != nil || !strings.HasPrefix(note, "none: ") || !strings.Contains(note, "engine: containerd does not apply") {
		t.Errorf("note %q, err %v; want none, saying engine: containerd does not apply", note, err)
	}
	if _, note, err := policyEngine(policy.Policy{Isolation: policy.IsolationUser}, uint32(os.Geteuid())); err != nil || strings.Contains(note, "containerd does not apply") || !strings.HasPrefix(note, "none: ") {
		t.Errorf("without an engine: note %q, err %v", note, err)
	}
}
