//go:build integration

package audit_test

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/account"
	"github.com/agentbox/agentbox/audit"
	"github.com/agentbox/agentbox/internal/testutil"
)

// lab is a throwaway set of accounts on this machine: the agent's account
// (home under a temp dir) and a victim whose home is under /home, plus a
// group, a passwd file naming only them and a sudoers file, all removed at
// cleanup. The real /etc/sudoers is never touched.
type lab struct {
	t                    *testing.T
	agent, victim, group string
	agentHome, home      string
	opts                 audit.AccountOptions
	sudoersD             string
}

func run(t *testing.T, argv ...string) {
	t.Helper()
	if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, out)
	}
}

func newLab(t *testing.T) *lab {
	testutil.RequireRoot(t)
	testutil.RequireBinary(t, "useradd", "passwd")
	testutil.RequireBinary(t, "setfacl", "acl")
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	id := hex.EncodeToString(b)
	dir := t.TempDir()
	l := &lab{
		t: t, agent: "abx-ua-" + id, victim: "abx-uv-" + id, group: "abx-ug-" + id,
		agentHome: filepath.Join(dir, "agent"), home: "/home/abx-uv-" + id, sudoersD: filepath.Join(dir, "sudoers.d"),
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	run(t, "groupadd", l.group)
	t.Cleanup(func() { _ = exec.Command("groupdel", l.group).Run() })
	run(t, "useradd", "--system", "--user-group", "--no-create-home", "--home-dir", l.agentHome, "--shell", "/usr/sbin/nologin", l.agent)
	t.Cleanup(func() { _ = exec.Command("userdel", l.agent).Run() })
	run(t, "useradd", "--user-group", "--no-create-home", "--home-dir", l.home, "--shell", "/bin/sh", l.victim)
	t.Cleanup(func() { _ = exec.Command("userdel", l.victim).Run() })
	t.Cleanup(func() { _ = os.RemoveAll(l.home) })
	run(t, "install", "-d", "-m", "0700", "-o", l.agent, "-g", l.agent, l.agentHome)
	run(t, "install", "-d", "-m", "0700", "-o", l.victim, "-g", l.victim, l.home)
	run(t, "install", "-d", "-m", "0700", "-o", l.victim, "-g", l.victim, l.home+"/.ssh")
	l.write(l.home+"/.ssh/id_ed25519", "-----BEGIN OPENSSH PRIVATE KEY-----\n", l.victim, 0o600)
	l.opts = audit.AccountOptions{Paths: account.Paths{Passwd: l.passwd(dir), Group: "/etc/group", Sudoers: filepath.Join(dir, "sudoers")}}
	l.write(l.opts.Paths.Sudoers, "root ALL=(ALL:ALL) ALL\n@includedir "+l.sudoersD+"\n", "root", 0o440)
	run(t, "install", "-d", "-m", "0750", l.sudoersD)
	return l
}

// passwd writes a passwd file with only the lab's accounts and root, so
// that the audit asks about the lab's homes and not this machine's others.
func (l *lab) passwd(dir string) string {
	out, err := exec.Command("getent", "passwd", "root", l.agent, l.victim).Output()
	if err != nil {
		l.t.Fatalf("getent passwd: %v", err)
	}
	p := filepath.Join(dir, "passwd")
	l.write(p, string(out), "root", 0o644)
	return p
}

func (l *lab) write(p, s, owner string, mode os.FileMode) {
	l.t.Helper()
	if err := os.WriteFile(p, []byte(s), mode); err != nil {
		l.t.Fatal(err)
	}
	run(l.t, "chown", owner+":", p)
	if err := os.Chmod(p, mode); err != nil {
		l.t.Fatal(err)
	}
}

// failing audits the agent's account and returns "code subject" for each
// failing finding.
func (l *lab) failing() []string {
	l.t.Helper()
	r, err := audit.AuditAccount(l.agent, l.opts, audit.Options{})
	if err != nil {
		l.t.Fatal(err)
	}
	var out []string
	for _, f := range r.Unaccepted() {
		out = append(out, f.Code+" "+f.Subject)
	}
	return out
}

func TestAccountAuditFaultsRealAccounts(t *testing.T) {
	l := newLab(t)
	if got := l.failing(); len(got) > 0 {
		t.Fatalf("the clean lab account fails: %v", got)
	}
	key := l.home + "/.ssh/id_ed25519"
	for _, tc := range []struct {
		name, want  string
		fault, undo [][]string
	}{
		{
			"home other-read", "home-directory-readable " + l.home,
			[][]string{{"chmod", "0755", l.home}},
			[][]string{{"chmod", "0700", l.home}},
		},
		{
			"home through a group", "home-directory-readable " + l.home,
			[][]string{{"usermod", "-aG", l.group, l.agent}, {"chgrp", l.group, l.home}, {"chmod", "0750", l.home}},
			[][]string{{"chmod", "0700", l.home}, {"chgrp", l.victim, l.home}, {"gpasswd", "-d", l.agent, l.group}},
		},
		{
			"home through an ACL", "home-directory-readable " + l.home,
			[][]string{{"setfacl", "-m", "u:" + l.agent + ":rx", l.home}},
			[][]string{{"setfacl", "-b", l.home}},
		},
		{
			"private key readable", "credential-file-readable " + key,
			[][]string{{"chmod", "0711", l.home, l.home + "/.ssh"}, {"chmod", "0644", key}},
			[][]string{{"chmod", "0700", l.home, l.home + "/.ssh"}, {"chmod", "0600", key}},
		},
		{
			"key through an ACL", "credential-file-readable " + key,
			[][]string{{"setfacl", "-m", "u:" + l.agent + ":x", l.home, l.home + "/.ssh"}, {"setfacl", "-m", "u:" + l.agent + ":r", key}},
			[][]string{{"setfacl", "-b", l.home, l.home + "/.ssh", key}},
		},
		{
			"token in .profile", "secret-in-environment GITHUB_TOKEN",
			[][]string{{"sh", "-c", "echo 'export GITHUB_TOKEN=ghp_" + strings.Repeat("x", 36) + "' > " + l.agentHome + "/.profile"}},
			[][]string{{"rm", l.agentHome + "/.profile"}},
		},
		{"docker membership", "container-socket-mounted group docker", // and the socket, when it exists
			[][]string{{"usermod", "-aG", "docker", l.agent}}, [][]string{{"gpasswd", "-d", l.agent, "docker"}}},
		{
			"NOPASSWD sudoers.d line", "sudo-rights " + l.agent,
			[][]string{{"sh", "-c", "echo '" + l.agent + " ALL=(ALL) NOPASSWD: ALL' > " + l.sudoersD + "/50-abx"}},
			[][]string{{"rm", l.sudoersD + "/50-abx"}},
		},
		{
			"group sudoers line", "sudo-rights %" + l.group,
			[][]string{{"usermod", "-aG", l.group, l.agent}, {"sh", "-c", "echo '%" + l.group + " ALL=(root) /usr/bin/id' > " + l.sudoersD + "/50-abx"}},
			[][]string{{"rm", l.sudoersD + "/50-abx"}, {"gpasswd", "-d", l.agent, l.group}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, c := range tc.fault {
				run(t, c...)
			}
			got := l.failing()
			for _, c := range tc.undo {
				run(t, c...)
			}
			if tc.name == "docker membership" && len(got) == 2 && got[0] == "container-socket-mounted /run/docker.sock" {
				got = got[1:]
			}
			if len(got) != 1 || got[0] != tc.want {
				t.Errorf("with the fault: failing %v, want exactly [%s]", got, tc.want)
			}
			if after := l.failing(); len(after) > 0 {
				t.Errorf("after the fix: still failing %v", after)
			}
		})
	}
}

func TestAccountAuditAutoApproveRaised(t *testing.T) {
	l := newLab(t)
	run(t, "install", "-d", "-o", l.agent, l.agentHome+"/.claude")
	l.write(l.agentHome+"/.claude/settings.json", `{"permissions":{"defaultMode":"bypassPermissions"}}`, l.agent, 0o600)
	r, err := audit.AuditAccount(l.agent, l.opts, audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if fs := r.Containers[0].Findings; len(fs) != 1 || fs[0].Code != audit.CodeAutoApprove || fs[0].Severity != audit.Info {
		t.Fatalf("auto-approve alone: %+v, want one informational finding", fs)
	}
	run(t, "chmod", "0755", l.home)
	if got := l.failing(); len(got) != 2 {
		t.Errorf("with a readable home, auto-approve is raised and fails too: %v", got)
	}
}
