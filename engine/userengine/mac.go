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

// The macOS engine (docs/dedicated-user.md; MacEngine in mac_darwin.go):
// no agentbox-init, no cgroup, no nftables. agentbox, as root, loads the
// fence into the pf anchor com.apple/agentbox (account.RenderPFAnchor),
// grants the workspace to _agentbox with an extended ACL (chmod +a), and
// starts its own binary, the starter (StarterArg), as the account: forked
// by this process, which sets the account's groups, gid and uid before the
// exec (Go's SysProcAttr.Credential), with exactly the plan's environment,
// through /usr/bin/sandbox-exec with the Seatbelt profile
// (account.RenderSeatbelt) and the run's paths as parameters. The starter
// speaks agentbox-init's protocol on fd 3 (selftest): it runs the probes as
// the account, under the profile, reports them, waits for the launcher's go
// and executes the agent in its own place. Teardown kills every process of
// the account until pgrep finds none, flushes the anchor, releases pf's
// enable token, revokes the ACL, gives the files the agent made back to the
// workspace's owner and removes the run's home.
//
// Every command is an argv rendered here by a pure function (golden file:
// testdata/mac-run.golden, checked on Linux); mac_darwin.go only runs them.
// Why not sudo -u: sudo closes every fd above 2 (its closefrom default),
// so the starter could not get the protocol's socket, and it would put a
// process of root's between the launcher and the agent; the fork with
// Credential sets the same ids (the groups as id -G lists them, which is
// what sudo's initgroups would set) and leaves the agent this process's
// child, its exit status and streams the launcher's.

// The macOS tools, by absolute path: none is looked up on PATH.
const (
	macChmod = "/bin/chmod"
	macChown = "/usr/sbin/chown"
	macFind  = "/usr/bin/find"
	macPkill = "/usr/bin/pkill"
	macPgrep = "/usr/bin/pgrep"
	macPfctl = "/sbin/pfctl"
)

// StarterArg is the argument that makes the agentbox binary the starter
// (cmd/agentbox dispatches it to launcher.StarterMain).
const StarterArg = "__agentbox-starter"

// MacRecordFile is a macOS run's record in its bundle.
const MacRecordFile = "mac.json"

// MacRun is one run of the macOS engine: what it makes and what teardown
// takes down. The launcher fills it before anything starts.
type MacRun struct {
	// Account is the account's name (account.DarwinName); UID, GID and
	// Groups its ids, as the starter gets them.
	Account string `json:"account"`
	UID     int    `json:"uid"`
	GID     int    `json:"gid"`
	Groups  []int  `json:"groups,omitempty"`
	// Port is the gateway's loopback port, the fence's one exit.
	Port int `json:"port"`
	// Workspace is the granted workspace, a resolved path; Owner and
	// OwnerGID its owner's ids, to whom the agent's files go back.
	Workspace string `json:"workspace"`
	Owner     int    `json:"owner"`
	OwnerGID  int    `json:"owner_gid"`
	// Protected are the workspace's protected paths, resolved: the
	// profile denies writes to them.
	Protected []string `json:"protected,omitempty"`
	// Home is the run's fresh home (0700, the account's), Tmp in it.
	Home string `json:"home"`
	Tmp  string `json:"tmp"`
	// AgentDir is the agent's install directory, read-only to it.
	AgentDir string `json:"agent_dir"`
	// Starter is the agentbox binary the account executes, on a path it
	// can reach.
	Starter string `json:"starter"`
	// Profile and Anchor are the rendered Seatbelt profile and pf anchor
	// files in the run directory.
	Profile string `json:"profile"`
	Anchor  string `json:"anchor"`
	// PFToken is pfctl -E's reference on pf's enable count, released at
	// teardown; empty until the fence is loaded.
	PFToken string `json:"pf_token,omitempty"`
	// Granted says the grant was applied (or tried), so that teardown
	// revokes it.
	Granted bool `json:"granted,omitempty"`
	// Pid is the starter's pid, once started.
	Pid int `json:"pid,omitempty"`
}

// ACE is the access control entry that grants the account the workspace:
// read, write and search, inherited by what is created in it. Revoke
// removes the same text.
func (r MacRun) ACE() string {
	return "user:" + r.Account + " allow list,add_file,search,add_subdirectory,delete_child,readattr,writeattr,readextattr,writeextattr,readsecurity,read,write,append,execute,file_inherit,directory_inherit"
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

// GiveBackArgv gives every file of the account in the workspace to the
// workspace's owner: find on this filesystem only (-x), following no
// link (-P, find's default), and chown -h, which changes a link itself.
// It runs once every process of the account is dead, so nothing moves
// under it.
func (r MacRun) GiveBackArgv() []string {
	return []string{macFind, "-x", r.Workspace, "-user", strconv.Itoa(r.UID), "-exec", macChown, "-h", strconv.Itoa(r.Owner) + ":" + strconv.Itoa(r.OwnerGID), "{}", "+"}
}

// AnchorRules is the pf anchor's text (account.RenderPFAnchor).
func (r MacRun) AnchorRules() string { return account.RenderPFAnchor(r.UID, r.Port) }

// ProfileText is the Seatbelt profile's text (account.RenderSeatbelt).
func (r MacRun) ProfileText() (string, error) { return account.RenderSeatbelt(r.Port, r.Protected) }

// PFLoadArgv loads the anchor file, enabling pf with a token.
func (r MacRun) PFLoadArgv() []string { return account.PFLoad(r.Anchor) }

// PFFlushArgv removes every rule of the anchor.
func (r MacRun) PFFlushArgv() []string { return account.PFFlush() }

// PFReleaseArgv gives pf's enable token back (pf stays on if another
// holder has one).
func (r MacRun) PFReleaseArgv() []string { return []string{macPfctl, "-X", r.PFToken} }

// PFShowArgv lists the anchor's rules, to check the load and the flush.
func (r MacRun) PFShowArgv() []string {
	return []string{macPfctl, "-a", account.PFAnchor, "-s", "rules"}
}

// HasUserRules says whether pfctl -s rules output holds a rule of uid
// (pfctl prints "user = UID").
func HasUserRules(rules string, uid int) bool {
	id := strconv.Itoa(uid)
	for _, line := range strings.Split(rules, "\n") {
		f := strings.Fields(line)
		for i := 0; i+2 < len(f); i++ {
			if f[i] == "user" && f[i+1] == "=" && f[i+2] == id {
				return true
			}
		}
	}
	return false
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

// StarterArgv runs the starter as the account under the profile, with the
// run's paths: sandbox-exec -f PROFILE -DNAME=PATH … -- STARTER
// __agentbox-starter. The caller sets the ids and the environment; no
// shell runs, so the account's login files are never read.
func (r MacRun) StarterArgv() []string {
	argv := account.SeatbeltArgs(r.Profile, account.SeatbeltParams{Home: r.Home, Workspace: r.Workspace, Tmp: r.Tmp, Agent: r.AgentDir, Starter: r.Starter})
	return append(argv, r.Starter, StarterArg)
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
	profile, err := r.ProfileText()
	if err != nil {
		return err
	}
	for _, f := range []struct{ path, text string }{
		{r.Profile, profile},
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
