//go:build integration && linux

package main

import (
	"os"
	"strings"
	"testing"
)

// The review's confirmed bug: an accepted extra-writable-mount plus an
// auto-approve setting (here an agent variable the policy lets through)
// refused the launch as auto-approve-permission-mode high. Acceptance is
// applied before auto-approve is raised, so the launch goes ahead, and the
// record keeps both findings, the accepted one marked so.
func TestAcceptedFindingDoesNotRaiseAutoApprove(t *testing.T) {
	uid, gid := testUser(t)
	ws := workspaceOwnedBy(t, uid, gid)
	cache := workspaceOwnedBy(t, uid, gid)
	env := isolatedEnv(t, "AIDER_YES_ALWAYS=1")
	r := runIn(t, env, ws, "run", "--env", "AIDER_YES_ALWAYS", "--rw-bind", cache,
		"--accept", "extra-writable-mount=shared build cache", "--", "true")
	if r.code != exitOK {
		t.Fatalf("exit %d, want 0\nstderr: %s", r.code, r.stderr)
	}
	// A subject that is only a substring of the bind accepts nothing.
	other := cache + "-keys"
	if err := os.Mkdir(other, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(other) })
	pol := writePolicyOutside(t, "accept:\n  - code: extra-writable-mount\n    subject: "+cache+"\n    reason: cache\n")
	r = runIn(t, env, ws, "run", "--policy", pol, "--rw-bind", other, "--", "true")
	if r.code != exitRefused || !strings.Contains(r.stderr, "extra-writable-mount") {
		t.Errorf("a substring subject must not accept %s: exit %d\nstderr: %s", other, r.code, r.stderr)
	}
}
