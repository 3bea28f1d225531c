// Package policy holds the one struct that says what a sandbox may do, loads
// it from policy files and flags, and resolves it against captured host facts
// (Host) and the values chosen for the run (Run: its id, directory, gateway
// token and Target) into a Plan: the complete, side-effect-free description
// of one sandbox, the agent adapter's changes included, that the renderers
// (spec/, compose/) translate without deciding anything. What the plan names
// but does not hold (the run directory, the gateway, the leased ids) is made
// after it, from it.
//
// The zero Policy is the strict boundary of DESIGN.md §2:
//
//   - the workspace (the current directory) is the only read-write bind, at
//     the same path, and the working directory;
//   - no other host path is bound except the system directories read-only
//     (/usr with the merged-/usr links, /lib*, /bin, /sbin) and a handful of
//     files programs need from /etc; never /home, /root, /run or the host's
//     /etc wholesale;
//   - only TERM, LANG, LC_*, TZ and COLORTERM cross from the launcher's
//     environment;
//   - 4 GiB of memory, 512 processes, CPU weight 100;
//   - runc as the runtime.
//
// Every widening is explicit and visible: an extra bind is a policy entry the
// audit reports, and a finding the launch would refuse is only tolerated
// when the policy accepts it with a written reason (Accept). Unknown keys and
// wrong types in agentbox.yaml are errors that name the file and line.
//
// Where a policy may come from is part of the boundary (Load, Sources): the
// user's own policy.yaml in ConfigDir, a --policy file, and the workspace's
// agentbox.yaml only in the exact content the user trusted (TrustStore),
// since the workspace is the agent's side. Every policy file is read with
// ReadFile: no symbolic link followed, regular files only, MaxFileSize at
// most. A runtime root would execute must lie outside the workspace and be
// writable by root or the invoking user only (resolveRuntime).
package policy
