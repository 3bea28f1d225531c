//go:build cgo && linux

package seccomp

import "github.com/agentbox/agentbox/seccomp/profiles"

func init() { loadLibseccompFilter = loadAgentboxFilter }

// loadAgentboxFilter compiles the native profile with libseccomp, as runc
// does, and loads it; libseccomp sets no_new_privs first and syncs the
// filter to every thread of the Go runtime (TSYNC).
func loadAgentboxFilter() error {
	p, err := profiles.Default().NativeOCI()
	if err != nil {
		return err
	}
	f, _, err := build(p)
	if err != nil {
		return err
	}
	defer f.Release()
	return f.Load()
}
