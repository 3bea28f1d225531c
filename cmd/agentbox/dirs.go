package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/agentbox/agentbox/ledger"
)

// dirs are where agentbox keeps things: the state directory (the ledger)
// and the run root (run directories, id leases, runtime state), which is
// on a tmpfs where possible so that a reboot clears it with the sandboxes.
type dirs struct {
	state   string
	runRoot string
}

func findDirs(getenv func(string) string) (dirs, error) {
	euid := os.Geteuid()
	state, err := ledger.StateDir(getenv, euid)
	if err != nil {
		return dirs{}, err
	}
	return dirs{state: state, runRoot: runRoot(getenv, euid)}, nil
}

// runRoot is $AGENTBOX_RUN_ROOT, /run/agentbox for root, else
// $XDG_RUNTIME_DIR/agentbox, else /tmp/agentbox-UID.
func runRoot(getenv func(string) string, euid int) string {
	if r := getenv("AGENTBOX_RUN_ROOT"); filepath.IsAbs(r) {
		return r
	}
	if euid == 0 {
		return "/run/agentbox"
	}
	if x := getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(x) {
		return filepath.Join(x, "agentbox")
	}
	return filepath.Join(os.TempDir(), "agentbox-"+strconv.Itoa(euid))
}

func (d dirs) leases() string { return filepath.Join(d.runRoot, "userns") }

func (d dirs) runtimeRoot(name string) string { return filepath.Join(d.runRoot, "runtime", name) }

// grantLocks holds the per-workspace locks of engine.Grant.
func (d dirs) grantLocks() string { return filepath.Join(d.runRoot, "grants") }

func (d dirs) ensure() error {
	for _, p := range []string{d.state, d.runRoot} {
		if err := os.MkdirAll(p, 0o711); err != nil {
			return fmt.Errorf("create %s: %w", p, err)
		}
	}
	return nil
}

func (d dirs) ledger() *ledger.Ledger { return ledger.Open(filepath.Join(d.state, ledger.FileName)) }
