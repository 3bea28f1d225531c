package manifest

import (
	. "github.com/agentbox/agentbox/audit"
)

// The audit package's own test helpers, for the tests that moved here with
// the compose and Kubernetes loaders.

type discard struct{}

func (discard) Write(b []byte) (int, error) { return len(b), nil }

func wordSet(ws ...string) map[string]bool {
	m := make(map[string]bool, len(ws))
	for _, w := range ws {
		m[w] = true
	}
	return m
}

func codesOf(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		s := f.Code + " " + string(f.Severity)
		if f.Unknown {
			s += " unknown"
		}
		if f.Accepted {
			s += " accepted"
		}
		out = append(out, s)
	}
	return out
}
