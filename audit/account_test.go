package audit

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/account"
	"github.com/google/go-cmp/cmp"
)

// faultyAccount is an account model with one of each fault.
func faultyAccount() AccountModel {
	a := account.Account{
		Name: "abx", UID: 1001, GID: 1001, Home: "/var/lib/abx", Shell: "/usr/sbin/nologin",
		Groups: []account.Group{{Name: "abx", GID: 1001, Primary: true}, {Name: "docker", GID: 105}, {Name: "adm", GID: 4}},
	}
	yes := func(p, why string) account.Access { return account.Access{Allowed: account.Yes, Path: p, Why: why} }
	return AccountModel{
		Account: a,
		Homes: []PathAccess{
			{Path: "/home/ana", Owner: "ana", Want: "list", Access: yes("/home/ana", "other (mode 0755)")},
			{Path: "/root", Owner: "root", Want: "list", Access: account.Access{Allowed: account.No, Path: "/root", Why: "other (mode 0700) lacks r-x"}},
		},
		Secrets: []PathAccess{{Path: "/home/ana/.ssh/id_ed25519", Owner: "ana", What: "SSH private key", Want: "read", Access: yes("/home/ana/.ssh/id_ed25519", "ACL user:1001:r--")}},
		Sockets: []PathAccess{{Path: "/run/docker.sock", Want: "connect", Access: yes("/run/docker.sock", "group docker (mode 0660)")}},
		Sudo:    account.Sudo{Rules: []account.SudoRule{{File: "/etc/sudoers.d/x", Line: 1, Text: "abx ALL=(ALL) NOPASSWD: ALL", Via: "abx", NoPasswd: true}}},
		env: []EnvVar{
			{Name: "GITHUB_TOKEN", Value: "ghp_" + strings.Repeat("a", 36), Location: Location{File: "/var/lib/abx/.profile", Line: 3}},
			{Name: "EDITOR", Value: "vi", Location: Location{File: "/var/lib/abx/.profile", Line: 4}},
		},
		configs: []AgentConfig{{Agent: "claude", Path: "/var/lib/abx/.claude/settings.json", AutoApprove: "permissions.defaultMode=bypassPermissions"}},
	}
}

func TestAccountAuditNamesEachFault(t *testing.T) {
	r := auditAccountModel(faultyAccount(), Options{})
	var got []string
	for _, f := range r.Containers[0].Findings {
		got = append(got, string(f.Severity)+" "+f.Code+" "+f.Subject)
	}
	want := []string{
		"critical container-socket-mounted /run/docker.sock",
		"critical container-socket-mounted group docker",
		"critical credential-file-readable /home/ana/.ssh/id_ed25519",
		"critical sudo-rights abx",
		"high auto-approve-permission-mode /var/lib/abx/.claude/settings.json",
		"high home-directory-readable /home/ana",
		"high privileged-group-member group adm",
		"high secret-in-environment GITHUB_TOKEN",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("findings (-want +got):\n%s", d)
	}
	if f := r.Containers[0].Findings[7]; f.File != "/var/lib/abx/.profile" || f.Line != 3 {
		t.Errorf("secret finding located at %+v, want the profile's line 3", f.Location)
	}
	var text, js, sarif bytes.Buffer
	if err := WriteText(&text, r, false); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(&js, r); err != nil {
		t.Fatal(err)
	}
	if err := WriteSARIF(&sarif, r, ""); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"text": text.String(), "json": js.String(), "sarif": sarif.String()} {
		if strings.Contains(out, "ghp_aaaa") {
			t.Errorf("%s output holds the token's value", name)
		}
		if !strings.Contains(out, "credential-file-readable") {
			t.Errorf("%s output lacks the finding:\n%s", name, out)
		}
	}
	for _, s := range []string{"== abx (account) ==", "uid 1001 gid 1001", "docker(105)", "yes     read    /home/ana/.ssh/id_ed25519 (ACL user:1001:r--)", "GITHUB_TOKEN (credential, value withheld)"} {
		if !strings.Contains(text.String(), s) {
			t.Errorf("text lacks %q:\n%s", s, text.String())
		}
	}
	var doc struct {
		Containers []struct {
			Account *AccountModel `json:"account"`
		} `json:"containers"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil || doc.Containers[0].Account == nil || doc.Containers[0].Account.UID != 1001 {
		t.Errorf("JSON account section: %v %+v", err, doc)
	}
}

func TestCleanAccountAuditsClean(t *testing.T) {
	m := faultyAccount()
	m.Groups = m.Groups[:1]
	m.Homes, m.Secrets, m.Sockets, m.Sudo, m.env = m.Homes[1:], nil, nil, account.Sudo{}, m.env[1:]
	r := auditAccountModel(m, Options{})
	var fails []string
	for _, f := range r.Unaccepted() {
		fails = append(fails, f.Code)
	}
	if len(fails) > 0 {
		t.Errorf("clean account fails %v", fails)
	}
	if fs := r.Containers[0].Findings; len(fs) != 1 || fs[0].Code != CodeAutoApprove || fs[0].Severity != Info {
		t.Errorf("alone, auto-approve stays informational: %+v", fs)
	}
}

func TestAccountUnknownFails(t *testing.T) {
	m := faultyAccount()
	m.Homes = []PathAccess{{Path: "/home/x", Want: "list", Access: account.Access{Allowed: account.Unknown, Path: "/home/x", Why: "read ACL: not supported"}}}
	fs := checkHomesReadable(&m, &Options{})
	if len(fs) != 1 || !fs[0].Unknown || !fs[0].Fails() {
		t.Errorf("an undecided reach must fail as unknown: %+v", fs)
	}
}
