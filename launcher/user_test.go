//go:build linux

package launcher

import (
	"errors"
	"net"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"

	"github.com/agentbox/agentbox/account"
	"github.com/agentbox/agentbox/policy"
	"github.com/agentbox/agentbox/selftest"
)

func TestLockAccountRefusesASecondRun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "user-account.lock")
	first, err := lockAccount(path)
	if err != nil {
		t.Fatal(err)
	}
	var r *refusal
	if _, err := lockAccount(path); !errors.As(err, &r) {
		t.Fatalf("second lock: %v, want a refusal", err)
	}
	first.Close()
	again, err := lockAccount(path)
	if err != nil {
		t.Fatalf("after the first run ended: %v", err)
	}
	again.Close()
}

func TestFreeLoopbackPortIsFreeOnBothFamilies(t *testing.T) {
	port, err := freeLoopbackPort()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []struct{ network, host string }{{"tcp4", "127.0.0.1"}, {"tcp6", "::1"}} {
		l, err := net.Listen(a.network, net.JoinHostPort(a.host, strconv.Itoa(port)))
		if err != nil {
			t.Errorf("port %d on %s: %v", port, a.host, err)
			continue
		}
		l.Close()
	}
}

// userProtect passes the plan's protected and cover mounts to init as
// binds relative to the workspace, and nothing else.
func TestUserProtectBinds(t *testing.T) {
	plan := &policy.Plan{Workspace: "/srv/proj", Mounts: []policy.Mount{
		{Kind: policy.KindWorkspace, Source: "/srv/proj", Destination: "/srv/proj"},
		{Kind: policy.KindInstall, Source: "/usr", Destination: "/usr", ReadOnly: true},
		{Kind: policy.KindProtected, Source: "/srv/proj/.git/hooks", Destination: "/srv/proj/.git/hooks", ReadOnly: true},
		{Kind: policy.KindCover, Source: "/run/agentbox/runs/R/bundle/socket-cover", Destination: "/srv/proj/run/x.sock", ReadOnly: true},
		{Kind: policy.KindProtected, Source: "/srv/other", Destination: "/srv/other", ReadOnly: true},
	}}
	got := userProtect(plan)
	want := &selftest.Protect{Workspace: "/srv/proj", Binds: []selftest.ProtectBind{
		{Path: ".git/hooks"},
		{Path: "run/x.sock", Source: "/run/agentbox/runs/R/bundle/socket-cover"},
	}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("userProtect = %+v, want %+v", got, want)
	}
	if p := userProtect(&policy.Plan{Workspace: "/srv/proj"}); p != nil {
		t.Errorf("no protected mount: %+v, want nil", p)
	}
}

func TestHostAccountIDs(t *testing.T) {
	a := account.Account{Name: "_agentbox", UID: 451, GID: 451, Groups: []account.Group{{GID: 12}, {GID: 61}, {GID: 451, Primary: true}}}
	for _, tc := range []struct {
		name string
		ids  procIDs
		err  error
		want selftest.Decision
	}{
		{"the account's", procIDs{UIDs: []int{451, 451, 451}, GIDs: []int{451, 451}, Groups: []int{451, 12, 61}}, nil, selftest.Deny},
		{"saved uid root", procIDs{UIDs: []int{451, 451, 0}, GIDs: []int{451, 451}, Groups: []int{451}}, nil, selftest.Allow},
		{"the invoker's gid", procIDs{UIDs: []int{451, 451, 451}, GIDs: []int{20, 451}, Groups: []int{451}}, nil, selftest.Allow},
		{"staff kept", procIDs{UIDs: []int{451, 451, 451}, GIDs: []int{451, 451}, Groups: []int{451, 20}}, nil, selftest.Allow},
		{"nothing read", procIDs{}, nil, selftest.Allow},
		{"unreadable", procIDs{}, errors.New("ESRCH"), selftest.Unknown},
	} {
		r := hostAccountIDs(77, tc.ids, tc.err, a, "r1")
		if r.Decision != tc.want || r.Probe != "host-account-ids" || r.Expect != selftest.Deny || r.Evidence == "" {
			t.Errorf("%s: %+v, want %s", tc.name, r, tc.want)
		}
	}
}
