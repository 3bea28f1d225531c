//go:build integration

package account_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/account"
	"github.com/agentbox/agentbox/internal/testutil"
)

func getent(db, key string) bool { return exec.Command("getent", db, key).Run() == nil }

func setup(t *testing.T, o account.SetupOptions) string {
	t.Helper()
	var out bytes.Buffer
	if err := account.SetupUser(context.Background(), o, &out); err != nil {
		t.Fatalf("SetupUser(%+v): %v\n%s", o, err, out.String())
	}
	return out.String()
}

// TestSetupUserRealAccount creates agentbox-agent on this machine, checks
// it with getent and the account facts, runs setup again (nothing to do),
// then removes it, twice.
func TestSetupUserRealAccount(t *testing.T) {
	testutil.RequireRoot(t)
	testutil.LockAccount(t)
	testutil.RequireBinary(t, "useradd", "passwd")
	if getent("passwd", account.LinuxName) || getent("group", account.LinuxName) {
		testutil.Skip(t, account.LinuxName+" exists already: this test creates and removes it, and leaves one it did not make alone")
	}
	t.Cleanup(func() {
		_ = exec.Command("userdel", account.LinuxName).Run()
		_ = os.RemoveAll(account.LinuxHome)
	})
	if out := setup(t, account.SetupOptions{DryRun: true}); !strings.Contains(out, "useradd --system") || getent("passwd", account.LinuxName) {
		t.Fatalf("dry run printed %q and must create nothing", out)
	}
	setup(t, account.SetupOptions{})
	if !getent("passwd", account.LinuxName) || !getent("group", account.LinuxName) {
		t.Fatal("after setup, getent does not know the account and its group")
	}
	a, err := account.Lookup(account.LinuxName, account.Paths{})
	if err != nil {
		t.Fatal(err)
	}
	if a.UID >= 1000 || a.Shell != account.LinuxShell || a.Home != account.LinuxHome || len(a.Groups) != 1 || a.Groups[0].Name != account.LinuxName {
		t.Errorf("account %+v: want a system uid, nologin, its home and its own group only", a)
	}
	fi, err := os.Stat(account.LinuxHome)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("home: %v %v, want mode 0700", fi, err)
	}
	if out := setup(t, account.SetupOptions{}); strings.Contains(out, "+ ") {
		t.Errorf("second setup ran commands:\n%s", out)
	}
	setup(t, account.SetupOptions{Remove: true})
	if getent("passwd", account.LinuxName) || getent("group", account.LinuxName) {
		t.Error("after --remove, getent still knows the account or its group")
	}
	if _, err := os.Stat(account.LinuxHome); err == nil {
		t.Error("after --remove, the home is still there")
	}
	if out := setup(t, account.SetupOptions{Remove: true}); strings.Contains(out, "+ ") {
		t.Errorf("second remove ran commands:\n%s", out)
	}
}
