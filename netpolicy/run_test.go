package netpolicy

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStartRun: the run's gateway answers on its socket, keeps the socket
// out of other users' reach, logs to the run directory, and leaves nothing
// behind when stopped.
func TestStartRun(t *testing.T) {
	runDir := t.TempDir()
	r, err := StartRun(runDir, Config{RunID: "run-1"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(r.Token, TokenPrefix) {
		t.Errorf("token %q", r.Token)
	}
	dirInfo, _ := os.Stat(filepath.Dir(r.Socket))
	sockInfo, _ := os.Stat(r.Socket)
	if dirInfo.Mode().Perm() != 0o700 || sockInfo.Mode().Perm() != 0o666 || sockInfo.Mode().Type() != fs.ModeSocket {
		t.Errorf("modes: dir %v, socket %v", dirInfo.Mode(), sockInfo.Mode())
	}
	dial := func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", r.Socket)
	}
	client := &http.Client{Transport: &http.Transport{DialContext: dial}}
	resp, err := client.Get("http://gateway" + HealthPath)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	client.CloseIdleConnections()
	s, err := r.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if s.Allowed != 1 {
		t.Errorf("stats %+v", s)
	}
	if _, err := os.Stat(r.Socket); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the socket is left behind: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(runDir, RunLogName)); !strings.Contains(string(b), `"run_id":"run-1"`) {
		t.Errorf("decision log: %q", b)
	}
}
