package audit

import (
	"fmt"
	"path/filepath"

	"github.com/agentbox/agentbox/policy"
)

// Flags are the audit's options as a command line gives them: the output
// format, CODE=reason acceptances, workspace paths (made absolute), the
// variables allowed to hold a credential, the networks vouched internal,
// and the host's home directories.
type Flags struct {
	Format                                 string
	Accept, Workspaces, AllowEnv, Internal []string
	HomeDirs                               []string
}

// Options checks f and turns it into Options; an error names the flag.
func (f Flags) Options() (Options, error) {
	switch f.Format {
	case "text", "json", "sarif":
	default:
		return Options{}, fmt.Errorf("--format %q: want text, json or sarif", f.Format)
	}
	o := Options{AllowEnv: f.AllowEnv, InternalNetworks: f.Internal, HomeDirs: f.HomeDirs}
	for _, a := range f.Accept {
		code, reason, err := ParseAccept(a)
		if err != nil {
			return o, err
		}
		o.Accept = append(o.Accept, policy.Acceptance{Code: code, Reason: reason})
	}
	for _, w := range f.Workspaces {
		abs, err := filepath.Abs(w)
		if err != nil {
			return o, fmt.Errorf("--workspace %s: %w", w, err)
		}
		o.Workspaces = append(o.Workspaces, abs)
	}
	return o, nil
}
