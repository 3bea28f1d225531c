package audit

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"github.com/agentbox/agentbox/account"
	"github.com/agentbox/agentbox/policy"
)

// SourceAccount is the Source of the report of an account audit.
const SourceAccount = "account"

// AccountOptions say where an account audit reads the host. The zero value
// reads the system's passwd, group and sudoers files and this machine's
// file tree.
type AccountOptions struct {
	// Paths are the passwd, group and sudoers files (account.Paths).
	Paths account.Paths
	// InvokerHome is the home of whoever runs the audit (under sudo, the
	// invoking user's); it is checked like every other home.
	InvokerHome string
	// FS answers lstat and readlink; nil is the host.
	FS account.FS
}

// AccountModel is what an account audit read: the account, what it can
// reach of other users' homes, secrets and engine sockets, its sudo rights
// and its login files. ContainerReport.Account carries it.
type AccountModel struct {
	account.Account
	Homes   []PathAccess `json:"homes"`
	Secrets []PathAccess `json:"secrets"`
	Sockets []PathAccess `json:"sockets"`
	Sudo    account.Sudo `json:"sudo"`
	// ProfileFiles are the login files read for variables.
	ProfileFiles []string `json:"profile_files"`
	// Errors are what could not be read (a profile file, a passwd entry's
	// home); the findings that depend on them are unknown.
	Errors []string `json:"errors,omitempty"`

	env     []EnvVar
	configs []AgentConfig
}

// PathAccess is one path and whether the account reaches it.
type PathAccess struct {
	Path  string `json:"path"`
	Owner string `json:"owner,omitempty"`
	What  string `json:"what,omitempty"`
	// Want is what was asked: "list" (a directory's r-x) or "read".
	Want string `json:"want"`
	account.Access
}

// LoadAccount reads everything an account audit decides on. An account
// that does not exist, or is uid 0, is an error.
func LoadAccount(name string, ao AccountOptions) (AccountModel, error) {
	fsys := ao.FS
	if fsys == nil {
		fsys = account.Host
	}
	a, err := account.Lookup(name, ao.Paths)
	if err != nil {
		return AccountModel{}, err
	}
	if a.UID == 0 {
		return AccountModel{}, fmt.Errorf("account %s has uid 0: it is root and reads everything; audit the account the agent runs as", name)
	}
	m := AccountModel{Account: a}
	if err := m.loadHomes(fsys, ao); err != nil {
		return m, err
	}
	m.loadSockets(fsys)
	m.Sudo = account.SudoRights(a, sudoersPath(ao.Paths))
	m.loadProfiles()
	m.configs = ScanAgentConfigs([]Mount{{Type: "bind", Source: a.Home, Destination: a.Home}})
	return m, nil
}

func sudoersPath(p account.Paths) string {
	if p.Sudoers == "" {
		return "/etc/sudoers"
	}
	return p.Sudoers
}

// otherHome is a home directory of another user worth asking about.
type otherHome struct{ owner, path string }

// homesToCheck are the homes of every other passwd entry that is a person
// or root (uid 0, uid >= 1000, or a home under policy.HomeRoots), and the
// invoker's, once each, sorted.
func homesToCheck(a account.Account, ao AccountOptions) ([]otherHome, error) {
	us, err := account.Users(ao.Paths)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{a.Home: true, "/": true, "": true}
	var out []otherHome
	add := func(owner, p string) {
		p = filepath.Clean(p)
		if !seen[p] {
			seen[p] = true
			out = append(out, otherHome{owner, p})
		}
	}
	for _, u := range us {
		if u.Uid != a.UID && (u.Uid == 0 || u.Uid >= 1000 && u.Uid < 65534 || underHomeRoot(u.Home)) {
			add(u.Name, u.Home)
		}
	}
	if ao.InvokerHome != "" {
		add("invoker", ao.InvokerHome)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out, nil
}

func underHomeRoot(p string) bool {
	return slices.ContainsFunc(policy.HomeRoots, func(r string) bool { return under(filepath.Clean(p), r) && p != r })
}

func (m *AccountModel) loadHomes(fsys account.FS, ao AccountOptions) error {
	homes, err := homesToCheck(m.Account, ao)
	if err != nil {
		return err
	}
	for _, h := range homes {
		if _, err := os.Stat(h.path); err != nil {
			continue // a passwd entry whose home was never made
		}
		m.Homes = append(m.Homes, PathAccess{
			Path: h.path, Owner: h.owner, Want: "list",
			Access: account.Reach(fsys, m.Account, h.path, account.Read|account.Exec),
		})
		for _, s := range account.Secrets(h.path) {
			want, perm := "read", account.Read
			if s.Dir {
				want, perm = "list", account.Read|account.Exec
			}
			m.Secrets = append(m.Secrets, PathAccess{
				Path: s.Path, Owner: h.owner, What: s.What, Want: want,
				Access: account.Reach(fsys, m.Account, s.Path, perm),
			})
		}
	}
	return nil
}

// loadSockets asks about every engine socket of policy.EngineSockets that
// exists: connecting to a unix socket needs write on it.
func (m *AccountModel) loadSockets(fsys account.FS) {
	for _, s := range policy.EngineSockets {
		if _, err := os.Stat(s); err != nil {
			continue
		}
		m.Sockets = append(m.Sockets, PathAccess{
			Path: s, Want: "connect",
			Access: account.Reach(fsys, m.Account, s, account.Write),
		})
	}
}

func (m *AccountModel) loadProfiles() {
	m.ProfileFiles = account.ProfileFiles(m.Home, "")
	for _, f := range m.ProfileFiles {
		as, err := account.ReadAssignments(f)
		if err != nil {
			m.Errors = append(m.Errors, err.Error())
			continue
		}
		for _, a := range as {
			m.env = append(m.env, EnvVar{Name: a.Name, Value: a.Value, Location: Location{File: a.File, Line: a.Line}})
		}
	}
}

// AuditAccount audits the account name: what it can read of other users'
// homes and credentials, its privileged groups and engine sockets, its sudo
// rights, the credentials its login files export and the auto-approve
// settings under its home. The report holds one entry, Source "account".
func AuditAccount(name string, ao AccountOptions, opts Options) (Report, error) {
	m, err := LoadAccount(name, ao)
	if err != nil {
		return Report{}, err
	}
	return auditAccountModel(m, opts), nil
}

// LoadAndAudit loads the targets and audits them, or, when lo.User is set,
// audits that account (AuditAccount) instead.
func LoadAndAudit(ctx context.Context, targets []string, lo LoadOptions, opts Options) (Report, error) {
	if lo.User != "" {
		return AuditAccount(lo.User, lo.Account, opts)
	}
	cs, err := Load(ctx, targets, lo)
	if err != nil {
		return Report{}, err
	}
	return Audit(cs, opts), nil
}

func auditAccountModel(m AccountModel, opts Options) Report {
	o := opts.normalized()
	fs := []Finding{}
	for _, ch := range accountChecks {
		fs = append(fs, ch.Run(&m, &o)...)
	}
	accept(fs, o.Accept)
	raiseAutoApprove(fs, o.Accept)
	sortFindings(fs)
	c := m.container()
	return Report{Containers: []ContainerReport{{
		Name: m.Name, Source: SourceAccount, Findings: fs,
		PermissionMode: permissionOf(&c), Notes: m.Errors, Model: c, Account: &m,
	}}}
}

// container is the account seen as the container checks see one: its
// login environment and the agent settings under its home.
func (m *AccountModel) container() Container {
	return Container{Name: m.Name, Source: SourceAccount, User: m.Name, Env: m.env, AgentConfigs: m.configs, UserNS: Unknown}
}
