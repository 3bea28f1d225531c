package userengine

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/agentbox/agentbox/account"
)

// The macOS engine (docs/dedicated-user.md): no agentbox-init, no cgroup,
// no nftables. agentbox, as root, grants the workspace to _agentbox with
// an extended ACL (chmod +a), loads the fence into the pf anchor
// com.apple/agentbox (account.RenderPFAnchor), and starts the agent with
// sudo as the account, with the clean environment and under the Seatbelt
// profile (account.RenderSeatbelt). Teardown kills every process of the
// account until pgrep finds none, flushes the anchor, releases pf's enable
// token, revokes the ACL and removes the run's home.
//
// Every command is an argv rendered here by a pure function (golden file:
// testdata/mac-run.golden, checked on Linux); mac_darwin.go only runs them.
// Why sudo and not launchd or posix_spawn with setuid: sudo -n from root
// needs no sudoers rule, sets the account's uid, gid and groups
// (initgroups) as login does, and leaves the agent this process's child,
// so its exit status and streams are ours, with no daemon in between.

// The macOS tools, by absolute path: none is looked up on PATH.
const (
	macSudo  = "/usr/bin/sudo"
	macEnv   = "/usr/bin/env"
	macChmod = "/bin/chmod"
	macPkill = "/usr/bin/pkill"
	macPgrep = "/usr/bin/pgrep"
	macPfctl = "/sbin/pfctl"
)

// MacRecordFile is a macOS run's record in its bundle.
const MacRecordFile = "mac.json"

// MacRun is one run of the macOS engine: what it makes and what teardown
// takes down. The launcher fills it before anything starts.
type MacRun struct {
	// Account is the account's name (account.DarwinName) and UID its uid.
	Account string `json:"account"`
	UID     int    `json:"uid"`
	// Port is the gateway's loopback port, the fence's one exit.
	Port int `json:"port"`
	// Workspace is the granted workspace, a resolved path.
	Workspace string `json:"workspace"`
	// Home is the run's fresh home (0700, the account's), Tmp in it.
	Home string `json:"home"`
	Tmp  string `json:"tmp"`
	// AgentDir is the agent's install directory, read-only to it.
	AgentDir string `json:"agent_dir"`
	// Profile and Anchor are the rendered Seatbelt profile and pf anchor
	// files in the run directory.
	Profile string `json:"profile"`
	Anchor  string `json:"anchor"`
	// PFToken is pfctl -E's reference on pf's enable count, released at
	// teardown; empty until the fence is loaded.
	PFToken string `json:"pf_token,omitempty"`
}

// ACE is the access control entry that grants the account the workspace:
// read, write and search, inherited by what is created in it. Revoke
// removes the same text.
func (r MacRun) ACE() string {
	return r.Account + " allow list,add_file,search,add_subdirectory,delete_child,readattr,writeattr,readextattr,writeextattr,readsecurity,read,write,append,execute,file_inherit,directory_inherit"
}

// GrantArgv adds the ACE to the workspace and everything in it. chmod -R
// does not follow symbolic links (its -P, the default).
func (r MacRun) GrantArgv() []string {
	return []string{macChmod, "-R", "+a", r.ACE(), r.Workspace}
}

// RevokeArgv removes the ACE from the workspace and everything in it.
func (r MacRun) RevokeArgv() []string {
	return []string{macChmod, "-R", "-a", r.ACE(), r.Workspace}
}

// AnchorRules is the pf anchor's text (account.RenderPFAnchor).
func (r MacRun) AnchorRules() string { return account.RenderPFAnchor(r.UID, r.Port) }

// PFLoadArgv loads the anchor file, enabling pf with a token.
func (r MacRun) PFLoadArgv() []string { return account.PFLoad(r.Anchor) }

// PFFlushArgv removes every rule of the anchor.
func (r MacRun) PFFlushArgv() []string { return account.PFFlush() }

// PFReleaseArgv gives pf's enable token back (pf stays on if another
// holder has one).
func (r MacRun) PFReleaseArgv() []string { return []string{macPfctl, "-X", r.PFToken} }

// PFShowArgv lists the anchor's rules, to check the load.
func (r MacRun) PFShowArgv() []string {
	return []string{macPfctl, "-a", account.PFAnchor, "-s", "rules"}
}

// ParsePFToken reads the token pfctl -E prints ("Token : 1234…").
func ParsePFToken(out string) (string, error) {
	for _, line := range strings.Split(out, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if ok && strings.TrimSpace(k) == "Token" {
			if t := strings.TrimSpace(v); t != "" {
				if _, err := strconv.ParseUint(t, 10, 64); err == nil {
					return t, nil
				}
			}
		}
	}
	return "", errors.New("pfctl -E printed no token")
}

// AgentArgv runs cmd as the account: sudo (from root: no password, no
// sudoers rule) with its environment reset, then env -i with exactly env,
// then sandbox-exec with the profile and the run's paths. The account's
// login files are never read: no shell runs.
func (r MacRun) AgentArgv(env, cmd []string) []string {
	argv := []string{macSudo, "-n", "-u", r.Account, "--", macEnv, "-i"}
	argv = append(argv, env...)
	argv = append(argv, account.SeatbeltArgs(r.Profile, account.SeatbeltParams{Home: r.Home, Workspace: r.Workspace, Tmp: r.Tmp, Agent: r.AgentDir})...)
	return append(argv, cmd...)
}

// CheckEnv refuses an environment entry env -i would not take as a
// variable: each must be NAME=VALUE with NAME a shell name, so that none
// is read as an option of env or as the command.
func CheckEnv(env []string) error {
	for _, kv := range env {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || name == "" || strings.ContainsFunc(name, func(r rune) bool {
			return (r < 'A' || r > 'Z') && (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '_'
		}) || (name[0] >= '0' && name[0] <= '9') {
			return fmt.Errorf("environment entry %q is not NAME=VALUE", kv)
		}
	}
	return nil
}

// KillArgv sends SIGKILL to every process of the account.
func (r MacRun) KillArgv() []string {
	return []string{macPkill, "-KILL", "-U", strconv.Itoa(r.UID)}
}

// AliveArgv lists the pids of the account's processes; pgrep exits 1 when
// there is none.
func (r MacRun) AliveArgv() []string {
	return []string{macPgrep, "-U", strconv.Itoa(r.UID)}
}

// ParsePids reads pgrep's output, one pid a line.
func ParsePids(out string) ([]int, error) {
	var pids []int
	for _, f := range strings.Fields(out) {
		pid, err := strconv.Atoi(f)
		if err != nil || pid <= 0 {
			return nil, errors.New("pgrep printed " + strconv.Quote(f) + ", not a pid")
		}
		pids = append(pids, pid)
	}
	return pids, nil
}

// WriteFiles writes the Seatbelt profile and the pf anchor of the run into
// their files (root's run directory), refusing one that exists or a link.
func (r MacRun) WriteFiles() error {
	for _, f := range []struct{ path, text string }{
		{r.Profile, account.RenderSeatbelt(r.Port)},
		{r.Anchor, r.AnchorRules()},
	} {
		fd, err := os.OpenFile(f.path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o644)
		if err != nil {
			return err
		}
		_, err = fd.WriteString(f.text)
		if cerr := fd.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("write %s: %w", f.path, err)
		}
	}
	return nil
}
