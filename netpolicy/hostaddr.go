package netpolicy

import (
	"fmt"
	"net"
	"net/netip"
	"sync"
	"time"
)

// InterfaceAddrs returns every address on every interface of the network
// namespace the calling thread is in, up or down: the addresses at which
// the host the gateway runs on is itself reachable. It is the default
// source of the host addresses the proxy refuses (WithHostAddrs).
func InterfaceAddrs() ([]netip.Addr, error) {
	as, err := net.InterfaceAddrs()
	if err != nil {
		return nil, fmt.Errorf("list the interface addresses: %w", err)
	}
	out := make([]netip.Addr, 0, len(as))
	for _, a := range as {
		ipn, ok := a.(*net.IPNet)
		if !ok {
			continue
		}
		if ip, ok := netip.AddrFromSlice(ipn.IP); ok {
			out = append(out, ip.Unmap())
		}
	}
	return out, nil
}

// hostAddrMaxAge is how long the host's address list is trusted before it
// is read again, at the next decision that needs it: an address added to
// the host is refused within this time.
const hostAddrMaxAge = time.Second

// hostAddrs is the host's own addresses as the proxy's address check sees
// them: read when the gateway starts, and again when a decision finds the
// list older than maxAge. A list that cannot be read refuses every
// address it would have judged.
type hostAddrs struct {
	src    func() ([]netip.Addr, error)
	maxAge time.Duration

	mu   sync.Mutex
	set  map[netip.Addr]bool
	read time.Time
	err  error
}

func newHostAddrs(src func() ([]netip.Addr, error)) (*hostAddrs, error) {
	h := &hostAddrs{src: src, maxAge: hostAddrMaxAge}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.refresh(time.Now())
	if h.err != nil {
		return nil, fmt.Errorf("read this host's addresses, which the proxy refuses: %w", h.err)
	}
	return h, nil
}

// refresh reads the list; h.mu is held.
func (h *hostAddrs) refresh(now time.Time) {
	addrs, err := h.src()
	h.read, h.err = now, err
	if err != nil {
		return
	}
	h.set = make(map[netip.Addr]bool, len(addrs))
	for _, a := range addrs {
		h.set[a.WithZone("").Unmap()] = true
	}
}

// denied reports whether a (unmapped, without zone) is one of the host's
// addresses, reading the list again first if it is stale.
func (h *hostAddrs) denied(a netip.Addr) (string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if now := time.Now(); now.Sub(h.read) >= h.maxAge {
		h.refresh(now)
	}
	if h.err != nil {
		return fmt.Sprintf("address the gateway cannot check against this host's own (%v)", h.err), true
	}
	if h.set[a] {
		return "host address (this host has it on one of its interfaces)", true
	}
	return "", false
}
