//go:build integration

package manifest

import (
	"crypto/rand"
	"encoding/hex"
	"os/exec"
	"path/filepath"
	"testing"

	. "github.com/agentbox/agentbox/audit"
	"github.com/agentbox/agentbox/internal/testutil"
)

// The audit package's Docker helpers (audit/integration_test.go), for the
// compose tests that moved here with the compose loader.

const testImage = "agentbox-test/busybox:latest"

// fakeToken has a token's shape and is worthless.
const fakeToken = "ghp_FAKEFAKEFAKEFAKEFAKEFAKEFAKEFAKE0000"

type dockerEnv struct {
	t      *testing.T
	prefix string
	engine *Engine
}

func requireDocker(t *testing.T) *dockerEnv {
	t.Helper()
	testutil.RequireRoot(t)
	testutil.RequireBinary(t, "docker", "docker.io")
	if err := exec.Command("docker", "info").Run(); err != nil {
		testutil.Skip(t, "no Docker engine answers on /var/run/docker.sock (run scripts/docker-up.sh)")
	}
	if err := exec.Command("docker", "image", "inspect", testImage).Run(); err != nil {
		script, _ := filepath.Abs(filepath.Join("..", "..", "scripts", "docker-images.sh"))
		if out, err := exec.Command(script).CombinedOutput(); err != nil {
			t.Fatalf("build the test image with %s: %v\n%s", script, err, out)
		}
	}
	e, err := NewEngine("docker", "")
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return &dockerEnv{t: t, prefix: "abx-audit-" + hex.EncodeToString(b), engine: e}
}

func hasCode(fs []Finding, code string) bool {
	for _, f := range fs {
		if f.Code == code && f.Fails() {
			return true
		}
	}
	return false
}
