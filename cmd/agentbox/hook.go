package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/agentbox/agentbox/internal/loopback"
)

// The hook command is what the sandbox runs as its createContainer hook:
// inside the sandbox's namespaces, before pivot_root, with the runtime's
// privileges in the user namespace. It is not for people, so it is not
// listed in the help.
func init() {
	register(command{name: "hook", run: runHook})
}

func runHook(_ context.Context, io stdio, args []string) int {
	if len(args) != 1 || args[0] != "lo-up" {
		fmt.Fprintln(io.Err, "agentbox hook: usage: agentbox hook lo-up (run by the OCI runtime, not by hand)")
		return exitUsage
	}
	if io.In != nil {
		_, _ = ioCopyDiscard(io.In) // the runtime writes the container state on stdin
	}
	if err := loopback.Up(); err != nil {
		fmt.Fprintln(io.Err, "agentbox hook:", err)
		return exitHost
	}
	return exitOK
}

func ioCopyDiscard(r io.Reader) (int64, error) { return io.Copy(io.Discard, r) }

// hookBinary returns a path to this executable that the sandbox's mapped
// ids can execute: the executable itself when every directory above it is
// searchable by others, else a copy kept under the run root.
func hookBinary(runRoot string) (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find agentbox's own binary: %w", err)
	}
	if self, err = filepath.EvalSymlinks(self); err != nil {
		return "", err
	}
	if reachableByOthers(self) {
		return self, nil
	}
	return copyForSandbox(self, filepath.Join(runRoot, "bin"))
}

// reachableByOthers checks the "other" execute bit of path and each parent.
func reachableByOthers(path string) bool {
	for p := path; ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err != nil || fi.Mode().Perm()&0o001 == 0 {
			return false
		}
		if p == "/" {
			return true
		}
	}
}

// copyForSandbox copies self into dir once per version (size and mtime).
func copyForSandbox(self, dir string) (string, error) {
	fi, err := os.Stat(self)
	if err != nil {
		return "", err
	}
	dst := filepath.Join(dir, "agentbox-"+strconv.FormatInt(fi.Size(), 10)+"-"+strconv.FormatInt(fi.ModTime().UnixNano(), 10))
	if _, err := os.Stat(dst); err == nil {
		return dst, nil
	}
	if err := os.MkdirAll(dir, 0o711); err != nil {
		return "", err
	}
	src, err := os.Open(self)
	if err != nil {
		return "", err
	}
	defer src.Close()
	tmp, err := os.CreateTemp(dir, ".agentbox-*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	if _, err := io.Copy(tmp, src); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Chmod(0o755); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	return dst, os.Rename(tmp.Name(), dst)
}
