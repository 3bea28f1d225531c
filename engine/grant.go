package engine

import "fmt"

// Grant gives one host uid access to a workspace tree for the duration of a
// run, through POSIX ACLs. It is how a root-owned workspace is handed to an
// agent that must not be root on the host: the agent's host uid gets rwX
// (and the same as default ACL on directories, so new files inherit it),
// and Revoke takes it back and gives the agent's new files to the owner.
//
// Both walk the tree by file descriptors (walk.go): the agent of another
// run in the same workspace may be changing it meanwhile, and nothing it
// does can make root follow a symlink or leave the workspace's mount. Both
// hold a lock keyed by the workspace's device and inode in LockDir, so two
// runs never rewrite one ACL at once.
type Grant struct {
	Workspace string `json:"workspace"`
	UID       uint32 `json:"uid"`       // the agent's host uid
	GID       uint32 `json:"gid"`       // the agent's host gid
	OwnerUID  uint32 `json:"owner_uid"` // who the agent's files go back to
	OwnerGID  uint32 `json:"owner_gid"`
	// Dev and Ino identify the directory granted: Revoke touches nothing
	// in a directory found at Workspace that is not this one. Zero in a
	// meta.json written before they were recorded: not checked.
	Dev uint64 `json:"dev,omitempty"`
	Ino uint64 `json:"ino,omitempty"`
	// Born is the directory's birth time (ns since the epoch, 0 where the
	// file system does not keep one): an inode number is reused as soon as
	// a directory is deleted, a birth time is not.
	Born int64 `json:"born,omitempty"`
	// LockDir holds the per-workspace lock files; it is under agentbox's
	// run root, never in the workspace, where the agent could hold or
	// replace a lock.
	LockDir string `json:"lock_dir,omitempty"`
	// Mode is the workspace directory's mode at the grant: a chown grant
	// (GrantChown), which makes the agent its owner for the run, sets it
	// back at the revoke.
	Mode uint32 `json:"mode,omitempty"`
	// Method is how the workspace is handed over (GrantACL, GrantChown) and
	// MethodReason why that one (see GrantMethod).
	Method       string `json:"method,omitempty"`
	MethodReason string `json:"method_reason,omitempty"`
}

// GrantReport is what one Apply or Revoke did, for the run's record.
type GrantReport struct {
	Method string `json:"method"`
	// Walked counts the inodes visited.
	Walked int `json:"walked"`
	// Lent counts the inodes a chown grant gave the agent for the run.
	Lent int `json:"lent,omitempty"`
	// GivenBack counts the inodes owned by the agent's ids that were given
	// to the workspace's owner.
	GivenBack int `json:"given_back,omitempty"`
	// AgentACLEntries counts the named ACL entries removed from the
	// agent's inodes besides its own: ones it added, not inherited.
	AgentACLEntries int `json:"agent_acl_entries,omitempty"`
	// SetIDCleared lists the agent's files whose set-uid or set-gid bit
	// was cleared before they were handed back.
	SetIDCleared []string `json:"setid_cleared,omitempty"`
	// Skipped lists entries not walked: mount points, entries replaced
	// while the walk ran, hard links a grant must not follow.
	Skipped []string `json:"skipped,omitempty"`
	// Note says why nothing was done, when nothing was.
	Note string `json:"note,omitempty"`
}

// Summary says in one line what the report holds.
func (r GrantReport) Summary() string {
	if r.Note != "" {
		return r.Note
	}
	s := fmt.Sprintf("%d inode(s) walked, %d given back to the owner, %d set-id bit(s) cleared", r.Walked, r.GivenBack, len(r.SetIDCleared))
	if r.Lent > 0 {
		s += fmt.Sprintf(", %d lent to the agent", r.Lent)
	}
	if r.AgentACLEntries > 0 {
		s += fmt.Sprintf(", %d ACL entr(ies) the agent added removed", r.AgentACLEntries)
	}
	if len(r.Skipped) > 0 {
		s += fmt.Sprintf(", %d skipped", len(r.Skipped))
	}
	return s
}
