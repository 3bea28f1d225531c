package launcher

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"github.com/agentbox/agentbox/doctor"
	"github.com/agentbox/agentbox/engine"
	"github.com/agentbox/agentbox/policy"
)

// runtimeCacheFile, under the run root, keeps what the runtime step read
// of each runtime binary: its `--version` and the package that installed
// it cost several programs' start (tens of milliseconds) and are the same
// until the binary or the package database changes.
const runtimeCacheFile = "runtime-facts.json"

// runtimeCacheEntry is one runtime's facts with the identity of the files
// they were read from.
type runtimeCacheEntry struct {
	Key   string              `json:"key"`
	Facts doctor.RuntimeFacts `json:"facts"`
	// SelfTest is the verdict of the last self-test on this binary (see
	// noteSelfTest), and SelfTestRun the first run of the latest ones that
	// gave it; the planner's default runtime depends on it
	// (policy.ChooseRuntime).
	SelfTest    policy.SelfTestVerdict `json:"self_test,omitempty"`
	SelfTestRun string                 `json:"self_test_run,omitempty"`
}

// packageDatabases are the files whose change may change the package that
// owns a binary (dpkg's status, rpm's database).
var packageDatabases = []string{"/var/lib/dpkg/status", "/var/lib/rpm/rpmdb.sqlite", "/var/lib/rpm/Packages"}

// runtimeIdentity names the binary at path and the package databases by
// device, inode, size, modification and change times: a replaced or
// upgraded binary, or any package operation, gives another identity.
func runtimeIdentity(path string) (string, error) {
	id := ""
	for i, p := range append([]string{path}, packageDatabases...) {
		fi, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) && i > 0 {
			id += "|-"
			continue
		}
		if err != nil {
			return "", err
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok {
			return "", fmt.Errorf("%s: no stat data", p)
		}
		mtim, ctim := statTimes(st)
		id += fmt.Sprintf("|%s:%d:%d:%d:%d.%d:%d.%d", p, st.Dev, st.Ino, st.Size, mtim.Sec, mtim.Nsec, ctim.Sec, ctim.Nsec)
	}
	return id, nil
}

// inspectRuntimeCached is doctor.InspectRuntime, answered from the cache
// under runRoot while the binary and the package databases are the ones
// it was read from. Only a complete reading (a version) is kept, and only
// when write is true (`agentbox spec` reads the cache but makes nothing);
// a cache that cannot be read or written is read around, never an error.
func inspectRuntimeCached(ctx context.Context, runRoot, name, path string, write bool) doctor.RuntimeFacts {
	key, err := runtimeIdentity(path)
	if err != nil {
		return doctor.InspectRuntime(ctx, doctor.Live(), name, path)
	}
	key = name + key
	file := filepath.Join(runRoot, runtimeCacheFile)
	var cached []runtimeCacheEntry
	if data, err := os.ReadFile(file); err == nil && json.Unmarshal(data, &cached) == nil {
		for _, e := range cached {
			if e.Key == key {
				return e.Facts
			}
		}
	}
	rt := doctor.InspectRuntime(ctx, doctor.Live(), name, path)
	if rt.Version == "" || !write {
		return rt
	}
	keep := []runtimeCacheEntry{{Key: key, Facts: rt}}
	for _, e := range cached {
		if e.Facts.Path != path && len(keep) < 8 {
			keep = append(keep, e)
		}
	}
	if data, err := json.Marshal(keep); err == nil {
		_ = engine.WriteFileAtomic(file, data, 0o600)
	}
	return rt
}

// readRuntimeCache is the cache under runRoot and the key of the runtime
// name at path in it; a cache that cannot be read is empty.
func readRuntimeCache(runRoot, name, path string) (cached []runtimeCacheEntry, key string, err error) {
	if key, err = runtimeIdentity(path); err != nil {
		return nil, "", err
	}
	if data, err := os.ReadFile(filepath.Join(runRoot, runtimeCacheFile)); err == nil {
		_ = json.Unmarshal(data, &cached)
	}
	return cached, name + key, nil
}

// installedRuntimes are the runtimes of policy.DefaultRuntimes on PATH,
// each with the verdict of its last self-test here from the cache under
// runRoot: the planner's facts for choosing the default runtime. Reading
// them costs a few stat calls and no program's start.
func installedRuntimes(runRoot string) []policy.InstalledRuntime {
	var out []policy.InstalledRuntime
	for _, name := range policy.DefaultRuntimes {
		path, err := exec.LookPath(name)
		if err != nil {
			continue
		}
		rt := policy.InstalledRuntime{Name: name, Path: path}
		if cached, key, err := readRuntimeCache(runRoot, name, path); err == nil {
			for _, e := range cached {
				if e.Key == key {
					rt.SelfTest, rt.Run = e.SelfTest, e.SelfTestRun
				}
			}
		}
		out = append(out, rt)
	}
	return out
}

// storeSelfTest keeps verdict v of run for the runtime name at path in
// the cache under runRoot, on the entry the runtime step wrote for the
// binary (none: the binary's version could not be read, and nothing is
// kept). A verdict the entry holds already is left as it is, with the run
// that first gave it: the file is rewritten only when the verdict changes,
// not on every launch (noteSelfTest runs before the agent starts). Two launches
// that finish at once may lose one verdict, never tear the file
// (engine.WriteFileAtomic).
func storeSelfTest(runRoot, name, path string, v policy.SelfTestVerdict, run string) {
	cached, key, err := readRuntimeCache(runRoot, name, path)
	if err != nil {
		return
	}
	for i := range cached {
		if cached[i].Key == key {
			if cached[i].SelfTest == v && cached[i].SelfTestRun != "" {
				return
			}
			cached[i].SelfTest, cached[i].SelfTestRun = v, run
			if data, err := json.Marshal(cached); err == nil {
				_ = engine.WriteFileAtomic(filepath.Join(runRoot, runtimeCacheFile), data, 0o600)
			}
			return
		}
	}
}
