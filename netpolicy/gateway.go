package netpolicy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Resolver turns a name into addresses; *net.Resolver is one. Tests inject
// a resolver that maps names to loopback or test-namespace addresses.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Dialer makes outgoing connections; *net.Dialer is one. The gateway only
// ever asks it for "tcp" to a literal IP:port it has already checked.
type Dialer interface {
	DialContext(ctx context.Context, network, address string) (net.Conn, error)
}

// Gateway is the sandbox's only way out: model routes that swap the per-run
// token for the real key, an allowlisting HTTP proxy, and a health route.
// Create it with New, serve listeners with Serve, stop it with Close.
type Gateway struct {
	limits   Limits
	allow    Allowlist
	routes   map[string]*route
	resolver Resolver
	dialer   Dialer
	log      *decisionLog
	logFile  io.Closer
	token    atomic.Pointer[string]
	sem      chan struct{} // connections being served, at most Limits.MaxConns
	busy     chan struct{} // connections being refused for want of sem, at most as many
	bodies   *bodyBudget
	own      *hostAddrs      // the host's own addresses, refused like loopback
	ctx      context.Context // canceled by Close: ends upstream requests and dials
	cancel   context.CancelFunc

	mu        sync.Mutex
	closed    bool
	listeners map[net.Listener]struct{}
	conns     map[net.Conn]struct{}
	wg        sync.WaitGroup
}

// Option changes how New builds a Gateway; the defaults use the host's
// resolver, dialer and environment.
type Option func(*options)

type options struct {
	resolver  Resolver
	dialer    Dialer
	getenv    func(string) string
	logw      io.Writer
	hostAddrs func() ([]netip.Addr, error)
	onDeny    func(Decision)
}

// WithResolver makes the gateway resolve names with r.
func WithResolver(r Resolver) Option { return func(o *options) { o.resolver = r } }

// WithDialer makes the gateway connect with d.
func WithDialer(d Dialer) Option { return func(o *options) { o.dialer = d } }

// WithGetenv makes the gateway read key variables with getenv instead of
// os.Getenv.
func WithGetenv(getenv func(string) string) Option { return func(o *options) { o.getenv = getenv } }

// WithHostAddrs makes the gateway learn the host's own addresses, which the
// proxy refuses like loopback, from src instead of InterfaceAddrs. Tests
// inject a fixed list.
func WithHostAddrs(src func() ([]netip.Addr, error)) Option {
	return func(o *options) { o.hostAddrs = src }
}

// WithLogWriter sends the decision log to w instead of Config.LogFile.
func WithLogWriter(w io.Writer) Option { return func(o *options) { o.logw = w } }

// WithOnDeny calls f with each refusal as it is decided, before the
// decision log collapses repeats: the launcher streams them as the run's
// denials. f is called from the connection's goroutine and must not block.
func WithOnDeny(f func(Decision)) Option { return func(o *options) { o.onDeny = f } }

// New checks cfg, reads the real keys (from the environment or key files)
// and opens the decision log. It does not listen; call Serve.
func New(cfg Config, opts ...Option) (*Gateway, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("gateway config: %w", err)
	}
	o := options{resolver: net.DefaultResolver, getenv: os.Getenv, hostAddrs: InterfaceAddrs}
	for _, opt := range opts {
		opt(&o)
	}
	limits := cfg.Limits.withDefaults()
	if o.dialer == nil {
		o.dialer = &net.Dialer{Timeout: time.Duration(limits.DialTimeout)}
	}
	allow, _ := ParseAllowlist(cfg.Allow) // Validate checked it
	own, err := newHostAddrs(o.hostAddrs)
	if err != nil {
		return nil, err
	}
	g := &Gateway{
		own:    own,
		limits: limits, allow: allow, resolver: o.resolver, dialer: o.dialer,
		sem:       make(chan struct{}, limits.MaxConns),
		busy:      make(chan struct{}, limits.MaxConns),
		bodies:    newBodyBudget(limits.MaxBufferedBytes),
		listeners: map[net.Listener]struct{}{},
		conns:     map[net.Conn]struct{}{},
	}
	g.ctx, g.cancel = context.WithCancel(context.Background())
	tok := cfg.Token
	g.token.Store(&tok)
	routes, err := g.buildRoutes(cfg, o.getenv)
	if err != nil {
		return nil, err
	}
	g.routes = routes
	if err := g.openLog(cfg, o.logw); err != nil {
		return nil, err
	}
	g.log.onDeny = o.onDeny
	return g, nil
}

func (g *Gateway) openLog(cfg Config, w io.Writer) error {
	g.log = newDecisionLog(w, cfg.RunID, g.limits)
	if w != nil || cfg.LogFile == "" {
		return nil
	}
	f, err := os.OpenFile(cfg.LogFile, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("open gateway decision log: %w", err)
	}
	g.log.w, g.logFile = f, f
	return nil
}

// Serve accepts connections on l until l fails or the gateway is closed. It
// returns nil after Close.
func (g *Gateway) Serve(l net.Listener) error {
	if !track(g, g.listeners, l) {
		l.Close()
		return nil
	}
	defer untrack(g, g.listeners, l)
	var backoff time.Duration
	for {
		c, err := l.Accept()
		if err != nil {
			if g.isClosed() {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) {
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				time.Sleep(backoff)
				continue
			}
			return fmt.Errorf("gateway accept: %w", err)
		}
		backoff = 0
		g.dispatch(c)
	}
}

// dispatch serves c in its own goroutine, or refuses it when MaxConns
// connections are already being served. Refusals are bounded too: past
// MaxConns of them at once, a connection is closed without an answer.
func (g *Gateway) dispatch(c net.Conn) {
	if !track(g, g.conns, c) {
		c.Close()
		return
	}
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		defer untrack(g, g.conns, c)
		defer c.Close()
		select {
		case g.sem <- struct{}{}:
			defer func() { <-g.sem }()
			g.serveConn(c)
		default:
			g.refuseOver(c)
		}
	}()
}

// track adds x to set unless the gateway is closed.
func track[T comparable](g *Gateway, set map[T]struct{}, x T) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	set[x] = struct{}{}
	return true
}

func untrack[T comparable](g *Gateway, set map[T]struct{}, x T) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(set, x)
}

func (g *Gateway) isClosed() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.closed
}

// Revoke makes the per-run token worthless at once; requests in flight
// finish. Close calls it.
func (g *Gateway) Revoke() {
	empty := ""
	g.token.Store(&empty)
}

// Close revokes the token, closes every listener and connection, waits for
// the connection goroutines and closes the decision log. It reports the
// first error writing the log, if any.
func (g *Gateway) Close() error {
	g.Revoke()
	g.cancel()
	g.mu.Lock()
	g.closed = true
	for l := range g.listeners {
		l.Close()
	}
	for c := range g.conns {
		c.Close()
	}
	g.mu.Unlock()
	g.wg.Wait()
	for _, r := range g.routes {
		r.closeIdle()
	}
	err := g.log.close()
	if g.logFile != nil {
		err = errors.Join(err, g.logFile.Close())
		g.logFile = nil
	}
	return err
}

// Stats returns the decision counts so far.
func (g *Gateway) Stats() Stats { return g.log.stats() }

// RouteInfo describes one model route for the run record; it never holds a
// key.
type RouteInfo struct {
	Name      string   `json:"name"`
	URL       string   `json:"url"`
	Explicit  bool     `json:"explicit"`             // the URL was named by the user
	KeySource string   `json:"key_source,omitempty"` // "env:OPENAI_API_KEY", "file:/path", or empty
	HasKey    bool     `json:"has_key"`
	Models    []string `json:"models,omitempty"`
}

// Routes lists the model routes, sorted by name.
func (g *Gateway) Routes() []RouteInfo {
	out := make([]RouteInfo, 0, len(g.routes))
	for _, r := range g.routes {
		out = append(out, r.info())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
