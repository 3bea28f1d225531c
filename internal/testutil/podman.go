package testutil

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// PodmanImage is the audit tests' image in Podman's stores, imported for
// root and the test user by scripts/podman-images.sh.
const PodmanImage = "localhost/agentbox-test/busybox:latest"

// RequirePodman skips (or fails) unless podman runs here and holds
// PodmanImage, as root or, rootless, as an ordinary user with a runtime
// directory (XDG_RUNTIME_DIR, where rootless Podman keeps its state).
func RequirePodman(t testing.TB) {
	t.Helper()
	RequireBinary(t, "podman", "podman")
	if os.Geteuid() != 0 && os.Getenv("XDG_RUNTIME_DIR") == "" {
		Skip(t, "XDG_RUNTIME_DIR is not set: rootless Podman keeps its state and socket there (scripts/test-rootless.sh sets it)")
	}
	if out, err := exec.Command("podman", "image", "inspect", PodmanImage).CombinedOutput(); err != nil {
		Skip(t, fmt.Sprintf("%s is not in this user's Podman store (scripts/podman-setup.sh, run by scripts/test-setup.sh as root, imports it for root and the test user): %s", PodmanImage, bytes.TrimSpace(out)))
	}
}

// PodmanService starts `podman system service` for the test, on a socket
// in a directory of its own (under /run for root, under XDG_RUNTIME_DIR
// otherwise), waits until it answers and returns the socket's path. The
// service is stopped and the directory removed at cleanup.
func PodmanService(t testing.TB) string {
	t.Helper()
	runDir := "/run"
	if os.Geteuid() != 0 {
		runDir = os.Getenv("XDG_RUNTIME_DIR")
	}
	dir, err := os.MkdirTemp(runDir, "abx-podman-")
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "podman.sock")
	var log bytes.Buffer
	cmd := exec.Command("podman", "system", "service", "--time=0", "unix://"+sock)
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var waitErr error
	done := make(chan struct{})
	go func() { waitErr = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		// The service exits on SIGTERM; how it exits says nothing the
		// test needs.
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		os.RemoveAll(dir)
	})
	if err := waitAnswers(sock, done, &waitErr); err != nil {
		t.Fatalf("podman system service on %s: %v\n%s", sock, err, log.String())
	}
	return sock
}

// waitAnswers polls GET /_ping on sock until the service answers, exits
// (closing exited, with *waitErr its exit) or 30 seconds pass.
func waitAnswers(sock string, exited <-chan struct{}, waitErr *error) error {
	c := &http.Client{Timeout: time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", sock)
		},
	}}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return fmt.Errorf("the service exited: %w", *waitErr)
		default:
		}
		if resp, err := c.Get("http://podman/_ping"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	return errors.New("no answer within 30s")
}
