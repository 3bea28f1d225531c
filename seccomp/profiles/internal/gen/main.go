// Command gen writes agentbox's seccomp profile files (agentbox-amd64.json,
// agentbox-arm64.json) into the current directory. `go generate
// ./seccomp/...` runs it in seccomp/profiles; the package's tests fail when
// the checked-in files differ from what it would write.
package main

import (
	"fmt"
	"os"

	"github.com/agentbox/agentbox/seccomp/profiles"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run() error {
	p := profiles.Default()
	for _, arch := range profiles.Arches() {
		data, err := p.JSON(arch)
		if err != nil {
			return err
		}
		name := p.FileName(arch)
		if err := os.WriteFile(name, data, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
	}
	return nil
}
