package launcher

import (
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"

	"github.com/agentbox/agentbox/account"
	"github.com/agentbox/agentbox/engine/userengine"
	"github.com/agentbox/agentbox/policy"
	"github.com/agentbox/agentbox/selftest"
)

// freeLoopbackPort is a TCP port free on both 127.0.0.1 and ::1 now.
// agentbox-init binds it for the run's gateway; should another program
// take it first, init fails to and the launch stops there.
func freeLoopbackPort() (int, error) {
	for range 20 {
		l4, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			return 0, fmt.Errorf("choose the gateway's loopback port: %w", err)
		}
		port := l4.Addr().(*net.TCPAddr).Port
		l6, err := net.Listen("tcp6", net.JoinHostPort("::1", strconv.Itoa(port)))
		l4.Close()
		if err == nil {
			l6.Close()
			return port, nil
		}
	}
	return 0, errors.New("choose the gateway's loopback port: no port was free on both 127.0.0.1 and ::1")
}

// darwinIsolation is the policy of a run on macOS, where the dedicated
// account is the only isolation: a policy that names none gets
// IsolationUser, and note is the one line that says so ("" when the
// policy asked for it).
func darwinIsolation(p policy.Policy) (_ policy.Policy, note string) {
	if p.Isolation == policy.IsolationUser {
		return p, ""
	}
	p.Isolation = policy.IsolationUser
	return p, "agentbox: macOS has no namespaces: the agent runs as the dedicated account " + account.DarwinName + " (--isolation user)"
}

// refuseReach refuses when the account a could read one of homes, or
// when that cannot be decided; aclFix is the command that drops an ACL.
func refuseReach(a account.Account, homes []string, aclFix string) error {
	for _, home := range homes {
		acc := account.Reach(account.Host, a, home, account.Read)
		switch acc.Allowed {
		case account.Yes:
			return &refusal{fmt.Sprintf("the account %s can read %s (%s), so the agent would read it too; fix: chmod 0700 %s (and %s %s for an ACL), then check with: agentbox audit --user %s", a.Name, home, acc.Why, home, aclFix, home, a.Name)}
		case account.Unknown:
			return &refusal{fmt.Sprintf("whether the account %s can read %s is unknown (%s); fix what stops the check, then: agentbox audit --user %s", a.Name, home, acc.Why, a.Name)}
		}
	}
	return nil
}

// lockAccount holds path's lock for the run, or says which run holds it.
func lockAccount(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		return nil, &refusal{fmt.Sprintf("another --isolation user run holds the account (%s): its fence would drop this run's gateway port; wait for it to end, or run 'agentbox gc' if its launcher died", path)}
	}
	return f, nil
}

// hostIDMap is the identity map of the account's ids: the workspace grant
// reads the host ids from it.
func (p *prepared) hostIDMap() error {
	id := p.plan.Identity
	p.ids.uids = []specs.LinuxIDMapping{{ContainerID: id.UID, HostID: id.UID, Size: 1}}
	p.ids.gids = []specs.LinuxIDMapping{{ContainerID: id.GID, HostID: id.GID, Size: 1}}
	return nil
}

// makeUserHome makes the run's fresh home, the account's.
func (p *prepared) makeUserHome() error {
	id := p.plan.Identity
	return userengine.MakeHome(id.Home, id.UID, id.GID)
}

// plantFenceCanary adds a listener on ::1 to the one on 127.0.0.1: the
// fence probe aims at both, outside the gateway's port.
func (p *prepared) plantFenceCanary() error {
	l, err := net.Listen("tcp6", "[::1]:0")
	if err != nil {
		return fmt.Errorf("host loopback canary on ::1: %w", err)
	}
	p.user.fence = append(p.user.fence, *p.canaries.loopback, *p.canaries.serve(l, l.Addr().String()))
	return nil
}

// procIDs are a process's credentials as the host's kernel reports them.
type procIDs struct {
	UIDs, GIDs, Groups []int
}

// hostAccountIDs is the host's check of the macOS starter, the agent-to-be
// (host-account-ids, expecting DENY): every uid and gid of pid is the
// account's, and it holds no group the account is not in, so it can act
// as nobody else. An unreadable process is UNKNOWN.
func hostAccountIDs(pid int, ids procIDs, err error, a account.Account, runID string) selftest.Result {
	r := selftest.Result{Probe: "host-account-ids", Target: "pid " + strconv.Itoa(pid), Expect: selftest.Deny, RunID: runID}
	mine := func(g int) bool {
		return slices.ContainsFunc(a.Groups, func(x account.Group) bool { return x.GID == g })
	}
	switch {
	case err != nil || pid <= 0:
		r.Decision, r.Observed, r.Detail = selftest.Unknown, "unreadable", fmt.Sprintf("the starter's credentials: %v", err)
	case len(ids.UIDs) == 0 || slices.ContainsFunc(ids.UIDs, func(u int) bool { return u != a.UID }):
		r.Decision, r.Observed, r.Detail = selftest.Allow, "other-uid", fmt.Sprintf("uids %v, want all %d (%s)", ids.UIDs, a.UID, a.Name)
	case len(ids.GIDs) == 0 || slices.ContainsFunc(ids.GIDs, func(g int) bool { return g != a.GID }):
		r.Decision, r.Observed, r.Detail = selftest.Allow, "other-gid", fmt.Sprintf("gids %v, want all %d", ids.GIDs, a.GID)
	case slices.ContainsFunc(ids.Groups, func(g int) bool { return !mine(g) }):
		r.Decision, r.Observed, r.Detail = selftest.Allow, "other-group", fmt.Sprintf("groups %v, not all the account's", ids.Groups)
	default:
		r.Decision, r.Observed, r.Detail = selftest.Deny, "account-ids", fmt.Sprintf("uids %v, gids %v, groups %v: the account's (%s)", ids.UIDs, ids.GIDs, ids.Groups, a.Name)
	}
	r.Evidence = r.Digest()
	return r
}
