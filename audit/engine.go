package audit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"
)

// ErrEngineUnavailable is returned when the engine's socket does not answer.
var ErrEngineUnavailable = errors.New("container engine unavailable")

// ErrNoSuchContainer is returned when the engine knows no such container.
var ErrNoSuchContainer = errors.New("no such container")

// Engine reads running containers through the Docker or Podman Engine API
// on a local unix socket, with plain HTTP. It only reads (GET).
type Engine struct {
	// Kind is "docker" or "podman".
	Kind string
	// Socket is the path of the engine's unix socket.
	Socket string
	client *http.Client
	// self is what the engine says of itself, asked once (selfFacts).
	self     engineSelf
	selfOnce sync.Once
}

// NewEngine returns a client for kind's engine at socket; an empty socket
// means DefaultSocket(kind, os.Getenv).
func NewEngine(kind, socket string) (*Engine, error) {
	if kind != "docker" && kind != "podman" {
		return nil, fmt.Errorf("engine %q: want docker or podman", kind)
	}
	if socket == "" {
		socket = DefaultSocket(kind, os.Getenv)
	}
	socket = strings.TrimPrefix(socket, "unix://")
	dial := func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", socket)
	}
	return &Engine{Kind: kind, Socket: socket, client: &http.Client{
		Transport: &http.Transport{DialContext: dial, DisableKeepAlives: false},
		Timeout:   30 * time.Second,
	}}, nil
}

// DefaultSocket is where kind's engine listens: DOCKER_HOST or
// CONTAINER_HOST when they name a unix socket, else the root or rootless
// default path.
func DefaultSocket(kind string, getenv func(string) string) string {
	env, def := "DOCKER_HOST", "/var/run/docker.sock"
	if kind == "podman" {
		env, def = "CONTAINER_HOST", "/run/podman/podman.sock"
		if rt := getenv("XDG_RUNTIME_DIR"); rt != "" && os.Geteuid() != 0 {
			def = rt + "/podman/podman.sock"
		}
	}
	if h := getenv(env); strings.HasPrefix(h, "unix://") {
		return strings.TrimPrefix(h, "unix://")
	}
	return def
}

// Container reads the running (or stopped) container nameOrID and its
// networks into the model. A network whose object cannot be read keeps an
// unknown internal flag.
func (e *Engine) Container(ctx context.Context, nameOrID string) (Container, error) {
	b, err := e.inspect(ctx, nameOrID)
	if err != nil {
		return Container{}, fmt.Errorf("inspect container %s: %w", nameOrID, err)
	}
	cs, err := ParseInspect(b, e.Kind)
	if err != nil || len(cs) != 1 {
		return Container{}, fmt.Errorf("inspect container %s: unexpected answer from the %s engine: %w", nameOrID, e.Kind, errOrCount(err, len(cs)))
	}
	c := cs[0]
	if err := e.fillNetworks(ctx, &c, b); err != nil {
		return Container{}, err
	}
	c.UserNS = e.userNS(ctx, c.UserNS)
	c.RootUser = e.rootUser(ctx, b)
	c.Resolve()
	e.ownSocketGrants(ctx, &c)
	c.AgentConfigs = ScanAgentConfigs(c.Mounts)
	return c, nil
}

// inspect reads the container's inspect document. Podman's own endpoint
// answers what `podman inspect` prints, with the resulting capability sets
// that its Docker-compatible one leaves out; when it does not answer (no
// libpod API), the compatible one is read.
func (e *Engine) inspect(ctx context.Context, nameOrID string) ([]byte, error) {
	path := "/containers/" + url.PathEscape(nameOrID) + "/json"
	if e.Kind == "podman" {
		if b, err := e.get(ctx, podmanAPI+"/libpod"+path); err == nil {
			return b, nil
		}
	}
	return e.get(ctx, path)
}

// fillNetworks reads each attached network object for its internal flag;
// for network_mode container:X it reads X's networks.
func (e *Engine) fillNetworks(ctx context.Context, c *Container, raw []byte) error {
	if other, ok := strings.CutPrefix(c.NetworkMode, "container:"); ok {
		peer, err := e.get(ctx, "/containers/"+url.PathEscape(other)+"/json")
		if err != nil {
			return nil // the network check reports it as unknown
		}
		raw = peer
	}
	var d struct {
		NetworkSettings *struct {
			Networks map[string]*struct{ NetworkID string }
		}
	}
	if json.Unmarshal(raw, &d) != nil || d.NetworkSettings == nil {
		return nil
	}
	c.Networks = c.Networks[:0]
	for name, ep := range d.NetworkSettings.Networks {
		c.Networks = append(c.Networks, e.network(ctx, name, ep))
	}
	sortNetworks(c.Networks)
	return nil
}

func (e *Engine) network(ctx context.Context, name string, ep *struct{ NetworkID string }) Network {
	id := name
	if ep != nil && ep.NetworkID != "" {
		id = ep.NetworkID
	}
	b, err := e.get(ctx, "/networks/"+url.PathEscape(id))
	if err != nil {
		return Network{Name: name, Internal: Unknown, Why: "the network object cannot be read: " + err.Error()}
	}
	var n struct{ Internal *bool }
	if json.Unmarshal(b, &n) != nil || n.Internal == nil {
		return Network{Name: name, Internal: Unknown, Why: "the engine's network object has no Internal field"}
	}
	if *n.Internal {
		return Network{Name: name, Internal: Yes, Why: "read from the engine"}
	}
	return Network{Name: name, Internal: No, Why: "read from the engine"}
}

// maxAnswer bounds one API answer.
const maxAnswer = 16 << 20

func (e *Engine) get(ctx context.Context, path string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+e.Kind+path, nil)
	if err != nil {
		return nil, err
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: cannot reach the %s engine at %s (%w); start it or pass --host", ErrEngineUnavailable, e.Kind, e.Socket, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return nil, fmt.Errorf("read %s answer: %w", e.Kind, err)
	}
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return nil, notFound(engineMessage(b))
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("%s engine answered %s: %s", e.Kind, resp.Status, engineMessage(b))
	}
	return b, nil
}

// notFound is the engine's 404 answer, in its own words; it matches
// ErrNoSuchContainer.
type notFound string

func (e notFound) Error() string        { return string(e) }
func (e notFound) Is(target error) bool { return target == ErrNoSuchContainer }

func engineMessage(b []byte) string {
	var m struct{ Message string }
	if json.Unmarshal(b, &m) == nil && m.Message != "" {
		return m.Message
	}
	return strings.TrimSpace(string(b))
}

// errOrCount is err, or an error saying how many containers came back.
func errOrCount(err error, n int) error {
	if err != nil {
		return err
	}
	return fmt.Errorf("%d containers in the answer, want 1", n)
}
