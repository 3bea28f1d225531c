package launcher

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// A run root or state directory someone else controls is refused with the
// command that fixes it: /tmp/agentbox-UID made 0777 by another user was
// used as it was.
func TestCheckPrivateDir(t *testing.T) {
	me := os.Geteuid()
	for _, tc := range []struct {
		name string
		make func(t *testing.T, p string)
		euid int
		want []string // "" for no error
	}{
		{"missing", func(*testing.T, string) {}, me, nil},
		{"private", mkdirMode(0o700), me, nil},
		{"0711 like agentbox makes it", mkdirMode(0o711), me, nil},
		{"world-writable", mkdirMode(0o777), me, []string{"writable by others (mode 0777)", "rm -rf "}},
		{"group-writable", mkdirMode(0o770), me, []string{"writable by others (mode 0770)"}},
		{"another user's", mkdirMode(0o700), me + 1, []string{"owned by uid " + strconv.Itoa(me) + ", not by you (uid " + strconv.Itoa(me+1) + ")", "rm -rf "}},
		{"a symlink", func(t *testing.T, p string) {
			if err := os.Symlink(t.TempDir(), p); err != nil {
				t.Fatal(err)
			}
		}, me, []string{"is a symlink", "rm -rf "}},
		{"a file", func(t *testing.T, p string) {
			if err := os.WriteFile(p, nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}, me, []string{"is not a directory"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "agentbox-"+strconv.Itoa(me))
			tc.make(t, p)
			err := checkPrivateDir(p, tc.euid, runRootFix(p))
			if tc.want == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range append(tc.want, p) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

func mkdirMode(mode os.FileMode) func(*testing.T, string) {
	return func(t *testing.T, p string) {
		if err := os.Mkdir(p, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
	}
}

// A directory in a parent others may write and that is not sticky could
// be renamed and replaced under agentbox; /tmp's sticky bit is fine.
func TestCheckPrivateDirParent(t *testing.T) {
	for mode, ok := range map[os.FileMode]bool{0o755: true, 0o777 | os.ModeSticky: true, 0o777: false} {
		parent := t.TempDir()
		if err := os.Chmod(parent, mode); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(parent, "run")
		mkdirMode(0o700)(t, p)
		err := checkPrivateDir(p, os.Geteuid(), runRootFix(p))
		if (err == nil) != ok {
			t.Errorf("parent mode %v: error %v, want ok=%v", mode, err, ok)
		}
		if err != nil && !strings.Contains(err.Error(), "XDG_RUNTIME_DIR") {
			t.Errorf("error %q does not say how to fix it", err)
		}
	}
}

// The default rootless run root, /tmp/agentbox-UID, made world-writable by
// another user first, stops every command that uses it, with the fix.
// The invoking user here is a uid that did not make the directory.
func TestDefaultRunRootMadeByAnotherUser(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	euid := os.Geteuid() + 4242
	root := runRoot(func(string) string { return "" }, euid)
	if root != filepath.Join(tmp, "agentbox-"+strconv.Itoa(euid)) {
		t.Fatalf("run root %s, want the /tmp fallback", root)
	}
	mkdirMode(0o777)(t, root)
	err := Dirs{State: filepath.Join(t.TempDir(), "state"), RunRoot: root, euid: euid}.check()
	for _, w := range []string{"owned by uid " + strconv.Itoa(os.Geteuid()), "rm -rf " + root, "XDG_RUNTIME_DIR"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("check: %v; want a refusal saying %q", err, w)
		}
	}
}

// The same check holds for a run root given by AGENTBOX_RUN_ROOT (as root
// too) and for the state directory, whose fix keeps the ledger.
func TestFindDirsChecksBoth(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "shared")
	mkdirMode(0o777)(t, bad)
	good := t.TempDir()
	for _, tc := range []struct {
		name, run, state, want string
	}{
		{"run root", bad, good, "run root: " + bad},
		{"state directory", good, bad, "chmod go-w " + bad},
	} {
		_, err := FindDirs(func(k string) string {
			switch k {
			case "AGENTBOX_RUN_ROOT":
				return tc.run
			case "AGENTBOX_STATE_DIR":
				return tc.state
			}
			return ""
		})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want it to say %q", tc.name, err, tc.want)
		}
	}
}
