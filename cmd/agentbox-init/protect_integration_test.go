//go:build integration && linux

package main

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/agentbox/agentbox/internal/testutil"
	"github.com/agentbox/agentbox/selftest"
)

// inMountNS runs f on a thread of its own in a private mount namespace
// (as root), which ends with it: the host's mounts never change.
func inMountNS(t *testing.T, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
		if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
			done <- err
			return
		}
		if err := unix.Mount("none", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
			done <- err
			return
		}
		done <- f()
	}()
	return <-done
}

func protectWorkspaceFixture(t *testing.T) (ws, cover string) {
	t.Helper()
	ws = t.TempDir()
	for _, d := range []string{".git/hooks", "src"} {
		if err := os.MkdirAll(filepath.Join(ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"agentbox.yaml", ".git/config", "src/main.go"} {
		if err := os.WriteFile(filepath.Join(ws, f), []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cover = filepath.Join(t.TempDir(), "socket-cover")
	if err := os.WriteFile(cover, nil, 0o444); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "sock"), nil, 0o644); err != nil { // stands for a socket
		t.Fatal(err)
	}
	return ws, cover
}

// The binds are read-only and cannot be removed or renamed, even by root;
// the rest of the workspace stays writable; a path gone is skipped; the
// host's mount namespace does not see any of it.
func TestProtectWorkspaceAsRoot(t *testing.T) {
	testutil.RequireRoot(t)
	ws, cover := protectWorkspaceFixture(t)
	p := &selftest.Protect{Workspace: ws, Binds: []selftest.ProtectBind{
		{Path: "agentbox.yaml"},
		{Path: ".git/hooks"},
		{Path: ".git/config"},
		{Path: ".agentbox"},
		{Path: "sock", Source: cover},
	}}
	err := inMountNS(t, func() error {
		if err := protectWorkspace(p); err != nil {
			return err
		}
		var bad []string
		expect := func(what string, err, want error) {
			if !errors.Is(err, want) {
				bad = append(bad, what+": "+errString(err)+", want "+want.Error())
			}
		}
		expect("write agentbox.yaml", os.WriteFile(filepath.Join(ws, "agentbox.yaml"), []byte("evil"), 0o644), unix.EROFS)
		expect("create a hook", os.WriteFile(filepath.Join(ws, ".git/hooks/pre-commit"), []byte("evil"), 0o755), unix.EROFS)
		expect("append to .git/config", os.WriteFile(filepath.Join(ws, ".git/config"), []byte("evil"), 0o644), unix.EROFS)
		expect("write over the socket's cover", os.WriteFile(filepath.Join(ws, "sock"), []byte("evil"), 0o644), unix.EROFS)
		expect("remove agentbox.yaml", unix.Unlink(filepath.Join(ws, "agentbox.yaml")), unix.EBUSY)
		expect("rename .git/hooks", unix.Rename(filepath.Join(ws, ".git/hooks"), filepath.Join(ws, ".git/h")), unix.EBUSY)
		expect("write src/main.go", os.WriteFile(filepath.Join(ws, "src/main.go"), []byte("ok\n"), 0o644), nil)
		expect("create a top-level file", os.WriteFile(filepath.Join(ws, "new"), []byte("ok\n"), 0o644), nil)
		expect("create .git/index.lock", os.WriteFile(filepath.Join(ws, ".git/index.lock"), []byte("ok\n"), 0o644), nil)
		if len(bad) > 0 {
			return errors.New(strings.Join(bad, "; "))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The host's namespace: nothing is mounted there.
	if err := os.WriteFile(filepath.Join(ws, "agentbox.yaml"), []byte("host\n"), 0o644); err != nil {
		t.Errorf("the host cannot write agentbox.yaml: %v", err)
	}
	if exists(filepath.Join(ws, ".git/hooks/pre-commit")) {
		t.Error("the hook was created")
	}
}

// A protected path that is a symlink (made after the plan) refuses the
// start instead of binding what it points to, and so does a path that
// leads out of the workspace through one.
func TestProtectWorkspaceRefusesSymlinksAsRoot(t *testing.T) {
	testutil.RequireRoot(t)
	for _, tc := range []struct{ link, target, path string }{
		{"agentbox.yaml", "/etc/hostname", "agentbox.yaml"},
		{".git/hooks", "/etc", ".git/hooks"},
		{".git", "/etc", ".git/hooks"},
	} {
		ws := t.TempDir()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(ws, tc.link)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(tc.target, filepath.Join(ws, tc.link)); err != nil {
			t.Fatal(err)
		}
		err := inMountNS(t, func() error {
			return protectWorkspace(&selftest.Protect{Workspace: ws, Binds: []selftest.ProtectBind{{Path: tc.path}}})
		})
		if !errors.Is(err, unix.ELOOP) {
			t.Errorf("%s -> %s, protecting %s: %v, want ELOOP", tc.link, tc.target, tc.path, err)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}
