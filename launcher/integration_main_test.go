//go:build integration

package launcher

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// initBin is the agentbox-init the in-process launches use: $AGENTBOX_INIT
// when the caller built it (the rootless suite does), else built once here.
var initBin string

func TestMain(m *testing.M) {
	code, err := testMain(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	os.Exit(code)
}

func testMain(m *testing.M) (int, error) {
	if bin := os.Getenv("AGENTBOX_INIT"); bin != "" {
		initBin = bin
		return m.Run(), nil
	}
	dir, err := os.MkdirTemp("", "agentbox-lt-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o755); err != nil { // the sandbox's ids execute it
		return 0, err
	}
	initBin = filepath.Join(dir, "agentbox-init")
	build := exec.Command("go", "build", "-o", initBin, "../cmd/agentbox-init")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if msg, err := build.CombinedOutput(); err != nil {
		return 0, fmt.Errorf("build agentbox-init: %w\n%s", err, msg)
	}
	return m.Run(), nil
}

func randomHex(t *testing.T) string {
	t.Helper()
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}
