// Package bridge is the in-sandbox end of the gateway: it listens on
// 127.0.0.1:PORT and [::1]:PORT inside the sandbox's network namespace and
// relays every connection to the gateway's unix socket, which the launcher
// bind-mounts into the sandbox. The sandbox has no other route out.
//
// agentbox's init (a static binary built with CGO_ENABLED=0) calls Listen
// and Serve, so this package imports only the standard library's net, io,
// sync, context and errors (and os and syscall for the Dialer, dialer.go).
// The relay is io.Copy between *net.TCPConn and *net.UnixConn, which Linux
// runs as splice(2) both ways.
package bridge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// DefaultAddrs are the loopback addresses the bridge listens on.
var DefaultAddrs = []string{"127.0.0.1", "::1"}

// DefaultMaxConns bounds the connections the bridge relays at once.
const DefaultMaxConns = 256

// Config says where the bridge listens and where it relays to.
type Config struct {
	// Port is the loopback port agents connect to (required).
	Port int
	// Socket is the gateway's unix socket path inside the sandbox; required
	// unless Dial is set.
	Socket string
	// Dial, when set, makes each gateway connection instead of dialling
	// Socket (see Dialer).
	Dial func() (net.Conn, error)
	// Addrs are the IP addresses to listen on; nil means DefaultAddrs.
	// Listen fails if any of them cannot be bound.
	Addrs []string
	// MaxConns bounds concurrent relays (0 means DefaultMaxConns); a
	// connection over the bound is closed at once.
	MaxConns int
}

// Bridge relays loopback connections to the gateway socket.
type Bridge struct {
	socket    string
	dial      func() (net.Conn, error)
	listeners []net.Listener
	sem       chan struct{}
	wg        sync.WaitGroup
	mu        sync.Mutex
	conns     map[net.Conn]struct{}
	closed    bool
}

// Listen binds every address of cfg on cfg.Port. Port 0 picks a free port
// on the first address and uses the same port on the others. Listen does not
// check that the socket exists yet: the gateway may start after the bridge.
func Listen(cfg Config) (*Bridge, error) {
	if cfg.Port < 0 || cfg.Port > 65535 || (cfg.Socket == "" && cfg.Dial == nil) {
		return nil, fmt.Errorf("bridge: want a port (0-65535) and a socket path, got %d and %q", cfg.Port, cfg.Socket)
	}
	addrs := cfg.Addrs
	if addrs == nil {
		addrs = DefaultAddrs
	}
	maxConns := cfg.MaxConns
	if maxConns <= 0 {
		maxConns = DefaultMaxConns
	}
	b := &Bridge{socket: cfg.Socket, dial: cfg.Dial, sem: make(chan struct{}, maxConns), conns: map[net.Conn]struct{}{}}
	port := cfg.Port
	for _, a := range addrs {
		if _, err := netip.ParseAddr(a); err != nil {
			b.Close()
			return nil, fmt.Errorf("bridge: listen address %q is not an IP address", a)
		}
		l, err := net.Listen("tcp", net.JoinHostPort(a, strconv.Itoa(port)))
		if err != nil {
			b.Close()
			return nil, fmt.Errorf("bridge: listen on %s port %d: %w", a, port, err)
		}
		port = l.Addr().(*net.TCPAddr).Port
		b.listeners = append(b.listeners, l)
	}
	return b, nil
}

// Port is the port the bridge listens on.
func (b *Bridge) Port() int {
	if len(b.listeners) == 0 {
		return 0
	}
	return b.listeners[0].Addr().(*net.TCPAddr).Port
}

// Addrs returns the bound addresses.
func (b *Bridge) Addrs() []net.Addr {
	out := make([]net.Addr, len(b.listeners))
	for i, l := range b.listeners {
		out[i] = l.Addr()
	}
	return out
}

// Serve relays connections until ctx ends or Close is called; it then closes
// every listener and connection and returns nil. A listener that fails
// otherwise ends Serve with its error.
func (b *Bridge) Serve(ctx context.Context) error {
	errc := make(chan error, len(b.listeners))
	for _, l := range b.listeners {
		go func() { errc <- b.acceptLoop(l) }()
	}
	var err error
	select {
	case <-ctx.Done():
	case err = <-errc:
	}
	b.Close()
	b.wg.Wait()
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

func (b *Bridge) acceptLoop(l net.Listener) error {
	var backoff time.Duration
	for {
		c, err := l.Accept()
		if err != nil {
			if errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) {
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				time.Sleep(backoff)
				continue
			}
			return err
		}
		backoff = 0
		select {
		case b.sem <- struct{}{}:
		default:
			c.Close()
			continue
		}
		if !b.track(c) {
			<-b.sem
			c.Close()
			continue
		}
		b.wg.Add(1)
		go func() {
			defer b.wg.Done()
			defer func() { <-b.sem }()
			defer b.untrack(c)
			b.relay(c)
		}()
	}
}

func (b *Bridge) relay(c net.Conn) {
	defer c.Close()
	dial := b.dial
	if dial == nil {
		dial = func() (net.Conn, error) { return net.Dial("unix", b.socket) }
	}
	g, err := dial()
	if err != nil {
		return // the agent sees the connection close; the gateway is down
	}
	if !b.track(g) {
		g.Close()
		return
	}
	defer b.untrack(g)
	defer g.Close()
	Pipe(c, g)
}

// Pipe copies both ways between a and b until both directions end,
// half-closing each side when its peer finishes sending and closing both on
// an error. It returns the bytes copied from a to b and from b to a.
func Pipe(a, b net.Conn) (aToB, bToA int64) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		bToA = copyHalf(a, b)
	}()
	aToB = copyHalf(b, a)
	wg.Wait()
	return aToB, bToA
}

func copyHalf(dst, src net.Conn) int64 {
	n, err := io.Copy(dst, src)
	FinishHalf(dst, src, err)
	return n
}

// FinishHalf ends one direction of a relay after its copy returned err: on
// an error both connections close; at EOF only dst's write side closes (or
// dst, when it cannot half-close), so the other direction can finish.
func FinishHalf(dst, src net.Conn, err error) {
	if err != nil {
		dst.Close()
		src.Close()
		return
	}
	if cw, ok := dst.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	} else {
		dst.Close()
	}
}

func (b *Bridge) track(c net.Conn) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return false
	}
	b.conns[c] = struct{}{}
	return true
}

func (b *Bridge) untrack(c net.Conn) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.conns, c)
}

// Close stops the listeners and closes every relayed connection.
func (b *Bridge) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	b.closed = true
	var errs []error
	for _, l := range b.listeners {
		if err := l.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
			errs = append(errs, err)
		}
	}
	for c := range b.conns {
		c.Close()
	}
	return errors.Join(errs...)
}
