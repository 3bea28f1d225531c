package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// Every subcommand answers an unknown flag with one line that names the
// flag and where to read about the others, and exit 2 (before, run and
// audit exited 2 and printed nothing at all).
func TestUnknownFlagIsOneLineNamingIt(t *testing.T) {
	for name, c := range commands {
		if c.summary == "" {
			continue // internal commands
		}
		t.Run(name, func(t *testing.T) {
			var out, errb bytes.Buffer
			s := stdio{In: strings.NewReader(""), Out: &out, Err: &errb, Getenv: func(string) string { return "" }}
			code := dispatch(context.Background(), s, []string{name, "--no-such-flag-xyz"})
			lines := strings.Split(strings.TrimSpace(errb.String()), "\n")
			if code != exitUsage || len(lines) != 1 || !strings.Contains(lines[0], "--no-such-flag-xyz") || !strings.Contains(lines[0], "see 'agentbox "+name+" --help'") {
				t.Errorf("exit %d, stderr %q; want exit %d and one line naming the flag", code, errb.String(), exitUsage)
			}
		})
	}
}
