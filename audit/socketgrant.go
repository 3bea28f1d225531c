package audit

import (
	"fmt"
	"os"
	"os/user"
	"strconv"
	"strings"
	"syscall"

	"github.com/agentbox/agentbox/policy"
)

// SocketGrant says whose privileges a unix socket bound into a container
// hands to whoever can write to it, should an engine listen there, and the
// facts that decided it. A socket file's owner is whoever bound it: root's
// file belongs to a rootful engine, a user's file to an engine that runs as
// that user (rootless Podman or Docker), unless someone handed a root
// engine's socket to the user. When the socket is the audited engine's own,
// the engine's word on whether it is rootless settles that.
type SocketGrant struct {
	// Root is Yes when the socket grants root's privileges on the host, No
	// when only those of the user who owns it, Unknown when the facts
	// contradict each other.
	Root Tri `json:"root"`
	// UID owns the socket file; User is its name on this host ("" when
	// the passwd database does not name it).
	UID  int    `json:"uid"`
	User string `json:"user,omitempty"`
	// Engine is "docker" or "podman" when the socket is the audited
	// engine's own; Rootless is then what that engine says of itself
	// (Unknown when it could not be asked).
	Engine   string `json:"engine,omitempty"`
	Rootless Tri    `json:"rootless,omitempty"`
}

// socketOwner reads the owner of the unix socket at p, or returns nil when
// p is not a unix socket on this host.
func socketOwner(p string) *SocketGrant {
	fi, err := os.Stat(p)
	if err != nil || fi.Mode()&os.ModeSocket == 0 {
		return nil
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	g := &SocketGrant{UID: int(st.Uid), Root: No}
	if g.UID == 0 {
		g.Root = Yes
	}
	if u, err := user.LookupId(strconv.Itoa(g.UID)); err == nil {
		g.User = u.Username
	}
	return g
}

// userName names uid as who does: "agentbox-test (uid 1001)", or "uid
// 1001" when this host's passwd does not name it.
func userName(uid int) string {
	g := SocketGrant{UID: uid}
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
		g.User = u.Username
	}
	return g.who()
}

// fromEngine records what the engine kind, whose own socket this is, says
// of itself, and decides again: a rootful engine grants root's privileges
// whoever owns its socket; a rootless one its owner's.
func (g *SocketGrant) fromEngine(kind string, rootless Tri) {
	g.Engine, g.Rootless = kind, rootless
	switch {
	case rootless == No:
		g.Root = Yes
	case rootless == Yes && g.UID == 0:
		g.Root = Unknown // a rootless engine cannot make a file root owns
	case rootless == Yes:
		g.Root = No
	}
}

// who names the socket's owner: "agentbox-test (uid 1001)".
func (g *SocketGrant) who() string {
	if g.User == "" {
		return "uid " + strconv.Itoa(g.UID)
	}
	return fmt.Sprintf("%s (uid %d)", g.User, g.UID)
}

// clause completes "whoever can write to it …" from the facts, or is ""
// when they do not decide (or g is nil).
func (g *SocketGrant) clause() string {
	switch {
	case g == nil:
		return ""
	case g.Root == Yes && g.Engine != "" && g.UID != 0:
		return fmt.Sprintf("is root on the host: the %s engine behind it says it is not rootless, although %s owns the socket", g.Engine, g.who())
	case g.Root == Yes && g.Engine != "":
		return fmt.Sprintf("is root on the host: the %s engine behind it says it is not rootless, and root owns the socket", g.Engine)
	case g.Root == Yes:
		return "is root on the host: root owns the socket, so the engine that made it runs as root"
	case g.Root == No && g.Engine != "":
		return fmt.Sprintf("has the privileges of %s on the host, not root's: the %s engine behind it says it is rootless, and that user owns the socket; every file, process and subordinate id of the user is within reach", g.who(), g.Engine)
	case g.Root == No:
		return fmt.Sprintf("has the privileges of %s on the host, not root's: that user owns the socket, so an engine that made it runs as the user (rootless Podman or Docker); every file, process and subordinate id of the user is within reach", g.who())
	}
	return ""
}

// socketDestinationDetail is the finding's sentence about m, mounted where
// clients look for an engine socket.
func socketDestinationDetail(m Mount) string {
	if clause := m.Grant.clause(); clause != "" {
		return fmt.Sprintf("%s is where clients look for an engine socket, and the unix socket %s is mounted there: whoever can write to it %s", m.Destination, m.hostPath(), clause)
	}
	return fmt.Sprintf("%s is where clients look for an engine socket, and something is mounted there", m.Destination)
}

// socketDetail is the finding's sentence about the socket at p, which the
// path classifier put in class c: the classifier's words for what p is, and
// the grant's for whose privileges it hands out.
func socketDetail(p string, c policy.PathClass, g *SocketGrant) string {
	clause := g.clause()
	if clause == "" {
		return c.Describe(p)
	}
	what, _, found := strings.Cut(c.What, ": ")
	if !found {
		return c.Describe(p) + "; whoever can write to it " + clause
	}
	return p + " " + what + ": whoever can write to it " + clause
}
