package account

import (
	"fmt"
	"strings"
)

// PFAnchor is the pf anchor the macOS fence loads its rules into. The stock
// /etc/pf.conf evaluates anchor "com.apple/*", so no edit of pf.conf is
// needed; a main ruleset that lost that line never evaluates it.
const PFAnchor = "com.apple/agentbox"

// RenderPFAnchor renders the anchor's rules for the account uid: TCP to
// the gateway's loopback port, IPv4 and IPv6, passes; every other TCP and
// UDP packet of the account's sockets is refused at once (block return,
// so a client fails fast instead of hanging). pf attributes only TCP and
// UDP to a user; ICMP and DNS (resolved by mDNSResponder, another user)
// are for the Seatbelt profile to close.
func RenderPFAnchor(uid, gatewayPort int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# agentbox: the network fence of uid %d: its only exit is the gateway, loopback port %d.\n", uid, gatewayPort)
	fmt.Fprintf(&b, "# load: pfctl -E -a %s -f FILE; show: pfctl -a %s -sr; flush: pfctl -a %s -F all\n", PFAnchor, PFAnchor, PFAnchor)
	fmt.Fprintf(&b, "pass out quick on lo0 inet proto tcp from any to 127.0.0.1 port %d user %d keep state\n", gatewayPort, uid)
	fmt.Fprintf(&b, "pass out quick on lo0 inet6 proto tcp from any to ::1 port %d user %d keep state\n", gatewayPort, uid)
	fmt.Fprintf(&b, "block return out quick inet proto { tcp udp } all user %d\n", uid)
	fmt.Fprintf(&b, "block return out quick inet6 proto { tcp udp } all user %d\n", uid)
	return b.String()
}

// PFLoad is the argv that loads a rendered anchor file (enabling pf, with a
// reference-counted token, if it is off).
func PFLoad(file string) []string {
	return []string{"/sbin/pfctl", "-E", "-a", PFAnchor, "-f", file}
}

// PFFlush is the argv that removes every rule of the anchor.
func PFFlush() []string { return []string{"/sbin/pfctl", "-a", PFAnchor, "-F", "all"} }
