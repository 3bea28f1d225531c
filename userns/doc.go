// Package userns decides which host ids a sandbox's user namespace maps to.
//
// Every sandbox runs in a user namespace, and no container id ever maps to
// host id 0 (ErrHostRoot).
//
// As root, each run gets a slot of SlotSize uids and as many gids that no
// other concurrent run holds (Allocator, with flock-protected lease files).
// Slots come from the /etc/subuid and /etc/subgid entries of the user
// "agentbox" when both files have one (the administrator's explicit choice),
// otherwise from a built-in range starting at BuiltinBase that steps over
// every subordinate range of other users and every uid and gid in
// /etc/passwd and /etc/group, so a sandbox never shares a host id with a
// person or with a person's rootless containers. The allocator cannot see id
// ranges that other tools pick dynamically (systemd-nspawn's
// --private-users=pick, Podman --userns=auto without a subuid entry); give
// agentbox a dedicated entry on hosts that run them.
//
// ForSlot and MapRange turn a slot into runtime-spec mappings. With a keep
// id (the workspace owner), the agent's own container id maps to that host
// id instead, as Podman's keep-id does, so files it writes in the workspace
// belong to their owner.
//
// Rootless (agentbox run by an ordinary user), the plan decides the mode
// (policy.RootlessIDMap) from the user's subordinate ranges (Owned) and
// whether newuidmap/newgidmap are installed (HaveNewIDMap); the launcher
// makes the maps with MapRange.
//
// The parsers (ParseSubIDs, ParsePasswd, ParseGroup) decode each line with
// github.com/moby/sys/user and read the host files strictly on top of it: a
// malformed line, an id the library could only guess at among them, is a
// *ParseError with its line number, never skipped.
package userns
