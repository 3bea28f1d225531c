package selftest

import (
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// routeLookup asks the kernel for a route to addr by connecting a UDP
// socket, which selects a route and a source address and sends nothing.
func routeLookup(addr netip.AddrPort) error {
	domain, sa := unix.AF_INET6, unix.Sockaddr(&unix.SockaddrInet6{Port: int(addr.Port()), Addr: addr.Addr().As16()})
	if addr.Addr().Is4() || addr.Addr().Is4In6() {
		domain, sa = unix.AF_INET, &unix.SockaddrInet4{Port: int(addr.Port()), Addr: addr.Addr().Unmap().As4()}
	}
	fd, err := socket(domain, unix.SOCK_DGRAM, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.Connect(fd, sa)
}

// decideRoute: a route is ALLOW (a packet could leave); no route, no source
// address or no address family is DENY; a refusal is DENY.
func decideRoute(err error) (Decision, string) {
	switch {
	case err == nil:
		return Allow, "route"
	case errors.Is(err, unix.ENETUNREACH), errors.Is(err, unix.EHOSTUNREACH),
		errors.Is(err, unix.EADDRNOTAVAIL), errors.Is(err, unix.EAFNOSUPPORT):
		return Deny, "no-route"
	}
	d, o := decideSyscall(err)
	if d == Allow {
		return Unknown, o
	}
	return d, o
}

// decideConnect decides a TCP connect to an outside target that had a route:
// an answer of any kind (accept or refusal) is ALLOW; no route or a refusal
// by the sandbox is DENY; silence is UNKNOWN, since the packet left.
func decideConnect(err error) (Decision, string) {
	var ne net.Error
	switch {
	case err == nil:
		return Allow, "connected"
	case errors.Is(err, unix.ECONNREFUSED):
		return Allow, "refused-by-host"
	case errors.Is(err, unix.ENETUNREACH), errors.Is(err, unix.EADDRNOTAVAIL):
		return Deny, "no-route"
	case errors.Is(err, unix.EPERM), errors.Is(err, unix.EACCES):
		return Deny, errnoName(err)
	case errors.Is(err, os.ErrDeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return Unknown, "timeout"
	}
	return Unknown, errnoName(err)
}

// dialer returns a plain TCP dialer (no multipath, which Landlock cannot see).
func dialer(timeout time.Duration) *net.Dialer {
	d := &net.Dialer{Timeout: timeout}
	d.SetMultipathTCP(false)
	return d
}

// readToken reads what a canary sends within timeout, at most 4 KiB.
func readToken(c net.Conn, timeout time.Duration) []byte {
	_ = c.SetReadDeadline(time.Now().Add(timeout))
	b, _ := io.ReadAll(io.LimitReader(c, 4096))
	return b
}

// dialCanary connects to a canary and decides by its token: the canary's
// token is ALLOW; a refusal or no route DENY; a listener that is not the
// canary is DENY too (the host's canary was not reached).
func dialCanary(ctx context.Context, network, addr, digest string, timeout time.Duration) (Decision, string) {
	c, err := dialer(timeout).DialContext(ctx, network, addr)
	switch {
	case err == nil:
		defer c.Close()
		if digestMatches(readToken(c, timeout), digest) {
			return Allow, "reached-canary"
		}
		return Deny, "other-listener"
	case errors.Is(err, unix.ECONNREFUSED):
		return Deny, "refused"
	case errors.Is(err, unix.ENOENT):
		return Deny, "absent"
	}
	d, o := decideConnect(err)
	if d == Allow {
		return Unknown, o
	}
	return d, o
}
