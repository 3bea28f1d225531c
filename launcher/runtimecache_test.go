package launcher

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentbox/agentbox/policy"
)

// The runtime's facts are read once per binary: a second launch answers
// from the cache, a changed binary is read again, and a dry run (agentbox
// spec) writes nothing.
func TestRuntimeFactsAreCachedByBinaryIdentity(t *testing.T) {
	dir, root := t.TempDir(), t.TempDir()
	calls := filepath.Join(dir, "calls")
	rt := filepath.Join(dir, "fakert")
	script := "#!/bin/sh\necho x >> " + calls + "\necho 'fakert version 1.2.3'\n"
	if err := os.WriteFile(rt, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	count := func() int {
		data, _ := os.ReadFile(calls)
		return strings.Count(string(data), "x")
	}
	ctx := t.Context()
	if f := inspectRuntimeCached(ctx, root, "fakert", rt, false); f.Version != "1.2.3" {
		t.Fatalf("version %q, want 1.2.3", f.Version)
	}
	if _, err := os.Stat(filepath.Join(root, runtimeCacheFile)); err == nil {
		t.Fatal("a dry reading wrote the cache")
	}
	inspectRuntimeCached(ctx, root, "fakert", rt, true)
	inspectRuntimeCached(ctx, root, "fakert", rt, true)
	if n := count(); n != 2 {
		t.Fatalf("the runtime ran %d times for one dry and two cached readings, want 2", n)
	}
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(rt, later, later); err != nil {
		t.Fatal(err)
	}
	if f := inspectRuntimeCached(ctx, root, "fakert", rt, true); f.Version != "1.2.3" || count() != 3 {
		t.Fatalf("a changed binary was not read again (%d runs, version %q)", count(), f.Version)
	}
}

// A self-test's verdict is kept on the cache entry of the very binary that
// ran it, and is gone with the entry once the binary changes.
func TestSelfTestVerdictFollowsTheBinary(t *testing.T) {
	root := t.TempDir()
	bin := filepath.Join(t.TempDir(), "crun")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, key, err := readRuntimeCache(root, "crun", bin)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal([]runtimeCacheEntry{{Key: key}})
	if err := os.WriteFile(filepath.Join(root, runtimeCacheFile), data, 0o600); err != nil {
		t.Fatal(err)
	}
	storeSelfTest(root, "crun", bin, policy.SelfTestFailed, "R1")
	cached, key, _ := readRuntimeCache(root, "crun", bin)
	if len(cached) != 1 || cached[0].Key != key || cached[0].SelfTest != policy.SelfTestFailed || cached[0].SelfTestRun != "R1" {
		t.Fatalf("cache after a failed self-test: %+v", cached)
	}
	// The same verdict again leaves the file alone (no write per launch);
	// another verdict replaces it.
	file := filepath.Join(root, runtimeCacheFile)
	before, _ := os.Stat(file)
	storeSelfTest(root, "crun", bin, policy.SelfTestFailed, "R2")
	if after, _ := os.Stat(file); !os.SameFile(before, after) {
		t.Error("the same verdict again rewrote the cache")
	}
	if cached, _, _ := readRuntimeCache(root, "crun", bin); cached[0].SelfTestRun != "R1" {
		t.Errorf("the same verdict again: run %q, want the first, R1", cached[0].SelfTestRun)
	}
	storeSelfTest(root, "crun", bin, policy.SelfTestPassed, "R3")
	if cached, _, _ := readRuntimeCache(root, "crun", bin); cached[0].SelfTest != policy.SelfTestPassed || cached[0].SelfTestRun != "R3" {
		t.Errorf("a new verdict: %+v", cached[0])
	}
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n# upgraded\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, newKey, _ := readRuntimeCache(root, "crun", bin); newKey == key {
		t.Errorf("a changed binary keeps its identity %s: its old verdict would still count", key)
	}
}
