package doctor

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/ledger"
)

// fixtureHost is a captured host: a root tree under testdata/hosts/NAME/root
// and, in host.json, everything a tree cannot hold.
type fixtureHost struct {
	UID int               `json:"euid"`
	Env map[string]string `json:"env"`
	// Path maps a program name to where LookPath finds it.
	Path map[string]string `json:"path"`
	// Commands maps "argv joined by spaces" to its standard output; a
	// command not listed fails.
	Commands map[string]string `json:"commands"`
	// Stat gives owners and modes ("socket 0660", "dir 0755"); other paths
	// are stat'ed in the tree and owned by root.
	Stats       map[string]fixtureStat `json:"stat"`
	Landlock    int                    `json:"landlock_abi"`
	LandlockErr string                 `json:"landlock_err"`
	UserNSErr   string                 `json:"userns_err"`
	SelfTest    *fixtureSelfTest       `json:"selftest"`
	// RunRoot is the run root doctor is given; statfs maps a path to its
	// filesystem type (a path not listed does not exist).
	RunRoot string           `json:"run_root"`
	FSTypes map[string]int64 `json:"statfs"`

	root string
}

type fixtureStat struct {
	Mode string `json:"mode"`
	UID  uint32 `json:"uid"`
	GID  uint32 `json:"gid"`
}

type fixtureSelfTest struct {
	RunID  string         `json:"run_id"`
	Probes []ledger.Probe `json:"probes"`
}

// loadFixture reads testdata/hosts/name.
func loadFixture(t *testing.T, name string) (Host, *fixtureHost) {
	t.Helper()
	dir := filepath.Join("testdata", "hosts", name)
	b, err := os.ReadFile(filepath.Join(dir, "host.json"))
	if err != nil {
		t.Fatal(err)
	}
	fx := &fixtureHost{}
	if err := json.Unmarshal(b, fx); err != nil {
		t.Fatalf("%s/host.json: %v", dir, err)
	}
	fx.root, err = filepath.Abs(filepath.Join(dir, "root"))
	if err != nil {
		t.Fatal(err)
	}
	return Host{Root: fx.root, Sys: fx}, fx
}

// selfTest is the fixture's self-test, or nil when it has none.
func (fx *fixtureHost) selfTest() SelfTestFunc {
	if fx.SelfTest == nil {
		return nil
	}
	return func(context.Context) (SelfTestResult, error) {
		return SelfTestResult{RunID: fx.SelfTest.RunID, Probes: fx.SelfTest.Probes}, nil
	}
}

func (fx *fixtureHost) Stat(p string) (FileInfo, error) {
	if s, ok := fx.Stats[p]; ok {
		kind, perm, _ := strings.Cut(s.Mode, " ")
		n, err := strconv.ParseUint(perm, 8, 32)
		if err != nil {
			return FileInfo{}, fmt.Errorf("fixture stat %s: mode %q", p, s.Mode)
		}
		mode := fs.FileMode(n)
		switch kind {
		case "socket":
			mode |= fs.ModeSocket
		case "dir":
			mode |= fs.ModeDir
		}
		return FileInfo{Mode: mode, UID: s.UID, GID: s.GID}, nil
	}
	fi, err := os.Stat(filepath.Join(fx.root, p))
	if err != nil {
		return FileInfo{}, err
	}
	return FileInfo{Mode: fi.Mode()}, nil
}

func (fx *fixtureHost) LookPath(name string) (string, error) {
	if p, ok := fx.Path[name]; ok {
		return p, nil
	}
	return "", fmt.Errorf("exec: %q: executable file not found in $PATH", name)
}

func (fx *fixtureHost) Output(_ context.Context, name string, args ...string) ([]byte, error) {
	key := strings.Join(append([]string{name}, args...), " ")
	if out, ok := fx.Commands[key]; ok {
		return []byte(out), nil
	}
	return nil, fmt.Errorf("%s: exit status 1", key)
}

func (fx *fixtureHost) LandlockABI() (int, error) {
	if fx.LandlockErr != "" {
		return 0, fmt.Errorf("%s", fx.LandlockErr)
	}
	return fx.Landlock, nil
}

func (fx *fixtureHost) NewUserNamespace(context.Context) error {
	if fx.UserNSErr != "" {
		return fmt.Errorf("%s", fx.UserNSErr)
	}
	return nil
}

func (fx *fixtureHost) EUID() int { return fx.UID }

// Writable applies the permission bits of Stat: root may write anything,
// others where the owner's bits (if they own it) or the others' bits allow.
func (fx *fixtureHost) Writable(dir string) bool {
	fi, err := fx.Stat(dir)
	switch {
	case err != nil:
		return false
	case fx.UID == 0:
		return true
	case int(fi.UID) == fx.UID:
		return fi.Mode.Perm()&0o200 != 0
	}
	return fi.Mode.Perm()&0o002 != 0
}

func (fx *fixtureHost) Getenv(name string) string { return fx.Env[name] }

func (fx *fixtureHost) Statfs(p string) (FSInfo, error) {
	if t, ok := fx.FSTypes[p]; ok {
		return FSInfo{Type: t}, nil
	}
	return FSInfo{}, &fs.PathError{Op: "statfs", Path: p, Err: fs.ErrNotExist}
}
