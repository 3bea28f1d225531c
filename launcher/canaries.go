package launcher

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"

	"github.com/agentbox/agentbox/selftest"
)

// canaries are what the launcher plants outside the boundary before each
// run (DESIGN.md §5, planted-secret-unreadable): random files in the
// invoking user's real home and beside the bundle, a variable in the
// launcher's own environment, a TCP listener on the host's loopback and an
// abstract unix socket of the host. The sandbox must see none of them.
type canaries struct {
	files     []string
	listeners []net.Listener
	config    selftest.Canaries
	loopback  *selftest.NetCanary
	abstract  *selftest.NetCanary
	workspace *selftest.NetCanary // a socket in the workspace (workspace.go)
}

// canaryEnvPrefix names the environment canary; the value is random.
const canaryEnvPrefix = "AGENTBOX_CANARY_"

// canaryPlan are the canaries' names and values, chosen with the run
// before planning: the plan's environment is made from a host environment
// that holds the variable (so that a policy that let the environment
// through would carry it into the sandbox), and the plan covers the
// workspace socket as one found there. Both are planted after planning.
type canaryPlan struct {
	runID             string
	envName, envValue string
	// socket is the workspace socket canary's name, relative to the
	// workspace.
	socket string
}

func newCanaryPlan(runID string) canaryPlan {
	return canaryPlan{
		runID: runID, envName: canaryEnvPrefix + randomToken()[:12], envValue: randomToken(),
		socket: ".agentbox-canary-" + runID + ".sock",
	}
}

// env is the environment canary as KEY=value.
func (c canaryPlan) env() string { return c.envName + "=" + c.envValue }

func randomToken() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b) // crypto/rand does not fail on Linux
	return hex.EncodeToString(b)
}

// plantEnvCanary sets the canary variable in the launcher's own
// environment too, so that whatever passes the launcher's environment on
// (a runtime, an engine) would carry it into the sandbox.
func (c *canaries) plantEnvCanary(p canaryPlan) {
	os.Setenv(p.envName, p.envValue)
	c.config.EnvName, c.config.EnvSHA256 = p.envName, selftest.SHA256([]byte(p.envValue))
}

// canaryFiles are the canary files plantFiles plants: one in the home
// and one in the run directory, either skipped when "".
func canaryFiles(home, runDir, runID string) []string {
	var out []string
	for _, dir := range []string{home, runDir} {
		if dir != "" {
			out = append(out, filepath.Join(dir, ".agentbox-canary-"+runID))
		}
	}
	return out
}

// plantFiles writes the same random content into the user's real home and
// into the run directory, and names the home for the probes.
func (c *canaries) plantFiles(home, runDir, runID string) error {
	content := []byte(randomToken())
	c.config.FileSHA256 = selftest.SHA256(content)
	files := canaryFiles(home, runDir, runID)
	for _, p := range files {
		if err := os.WriteFile(p, content, 0o600); err != nil {
			return fmt.Errorf("plant canary in %s: %w", filepath.Dir(p), err)
		}
		c.files = append(c.files, p)
	}
	// The home and the files named from one read of the mount table; a
	// home that cannot be named is left out, a file must be.
	named := files
	if home != "" {
		named = append([]string{home}, files...)
	}
	hps, errs := selftest.IdentifyHostPaths("/proc", named...)
	if home != "" {
		if errs[0] == nil {
			c.config.HostHome = append(c.config.HostHome, hps[0])
		}
		hps, errs = hps[1:], errs[1:]
	}
	for i := range files {
		if errs[i] != nil {
			return errs[i]
		}
		c.config.Files = append(c.config.Files, hps[i])
	}
	return nil
}

// plantListeners opens the host-side network canaries.
func (c *canaries) plantListeners(runID string) error {
	tcp, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("host loopback canary: %w", err)
	}
	c.loopback = c.serve(tcp, tcp.Addr().String())
	name := "agentbox-canary-" + runID
	unix, err := net.Listen("unix", "@"+name)
	if err != nil {
		return fmt.Errorf("host abstract socket canary: %w", err)
	}
	c.abstract = c.serve(unix, name)
	return nil
}

// serve answers every connection with a token and closes it.
func (c *canaries) serve(l net.Listener, addr string) *selftest.NetCanary {
	c.listeners = append(c.listeners, l)
	token := []byte(randomToken())
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			_, _ = conn.Write(token)
			conn.Close()
		}
	}()
	return &selftest.NetCanary{Addr: addr, TokenSHA256: selftest.SHA256(token)}
}

// remove takes every canary away again.
func (c *canaries) remove() error {
	var errs []error
	for _, l := range c.listeners {
		l.Close()
	}
	for _, f := range c.files {
		if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if c.config.EnvName != "" {
		os.Unsetenv(c.config.EnvName)
	}
	return errors.Join(errs...)
}
