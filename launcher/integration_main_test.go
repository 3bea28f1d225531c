//go:build integration

package launcher

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// initBin is the agentbox-init the in-process launches use: $AGENTBOX_INIT
// when the caller built it (the rootless suite does), else built once here.
var initBin string

func init() { setupIntegration = buildInit }

// buildInit builds agentbox-init for the in-process launches (TestMain
// calls it), unless $AGENTBOX_INIT names one.
func buildInit() (cleanup func(), err error) {
	if bin := os.Getenv("AGENTBOX_INIT"); bin != "" {
		initBin = bin
		return func() {}, nil
	}
	dir, err := os.MkdirTemp("", "agentbox-lt-")
	if err != nil {
		return nil, err
	}
	cleanup = func() { os.RemoveAll(dir) }
	if err := os.Chmod(dir, 0o755); err != nil { // the sandbox's ids execute it
		cleanup()
		return nil, err
	}
	initBin = filepath.Join(dir, "agentbox-init")
	build := exec.Command("go", "build", "-o", initBin, "../cmd/agentbox-init")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if msg, err := build.CombinedOutput(); err != nil {
		cleanup()
		return nil, fmt.Errorf("build agentbox-init: %w\n%s", err, msg)
	}
	return cleanup, nil
}
