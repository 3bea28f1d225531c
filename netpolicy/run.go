package netpolicy

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Where a run's gateway lives, inside the sandbox and in the run directory.
const (
	// SandboxSocket is where the launcher bind-mounts the gateway socket
	// inside the sandbox, and where the bridge connects.
	SandboxSocket = "/run/agentbox/gateway.sock"
	// DefaultPort is the loopback port the bridge listens on inside the
	// sandbox, unless the policy names another.
	DefaultPort = 8787
	// RunSocketDir, RunSocketName and RunLogName are the gateway's files in
	// the run directory.
	RunSocketDir  = "gateway"
	RunSocketName = "gateway.sock"
	RunLogName    = "gateway.jsonl"
)

// RunGateway is the gateway of one sandbox run, serving its unix socket.
type RunGateway struct {
	*Gateway
	// Socket is the socket's host path, to bind-mount at SandboxSocket.
	Socket string
	// Log is the decision log's host path.
	Log string
	// Token is the per-run token to hand the agent (agents.Gateway).
	Token string

	served chan error
}

// StartRun starts the gateway of a run. It makes a fresh token unless
// cfg.Token is set, writes the decision log to runDir/gateway.jsonl unless
// cfg.LogFile is set, and listens on runDir/gateway/gateway.sock: the
// directory is 0700, so no other host user reaches the socket, and the
// socket is 0666, so that whatever uid the agent has inside the sandbox can
// connect through the bind mount. The socket must exist before the runtime
// creates the container, since it is a bind-mount source.
func StartRun(runDir string, cfg Config, opts ...Option) (*RunGateway, error) {
	if cfg.Token == "" {
		t, err := NewToken()
		if err != nil {
			return nil, err
		}
		cfg.Token = t
	}
	if cfg.LogFile == "" {
		cfg.LogFile = filepath.Join(runDir, RunLogName)
	}
	dir := filepath.Join(runDir, RunSocketDir)
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("gateway socket directory: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, fmt.Errorf("gateway socket directory: %w", err)
	}
	g, err := New(cfg, opts...)
	if err != nil {
		return nil, err
	}
	sock := filepath.Join(dir, RunSocketName)
	l, err := ListenUnix(sock, 0o666)
	if err != nil {
		g.Close()
		return nil, err
	}
	r := &RunGateway{Gateway: g, Socket: sock, Log: cfg.LogFile, Token: cfg.Token, served: make(chan error, 1)}
	go func() { r.served <- g.Serve(l) }()
	return r, nil
}

// Stop revokes the token, closes the gateway (the socket file goes with
// it) and returns the final decision counts for the run record.
func (r *RunGateway) Stop() (Stats, error) {
	err := r.Close()
	if serr := <-r.served; serr != nil {
		err = errors.Join(err, serr)
	}
	return r.Stats(), err
}
