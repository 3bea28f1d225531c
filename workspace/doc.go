// Package workspace inspects the agent's side of the boundary: the project
// directory that every run binds read-write, and that the agent of an
// earlier run (or whoever published the repository) may have written in
// every byte. It only ever reads, through file descriptors, never
// following a symlink, never leaving the workspace's file system, and never
// executing anything (git included).
//
// It owns three lists:
//
//   - DefaultProtect, the paths bound read-only over themselves inside the
//     sandbox where they exist (policy field protect: replaces the list; an
//     empty list protects nothing). Each entry carries its reason.
//   - The pathname unix sockets found in the workspace at launch (Inspect),
//     which the plan covers with an empty read-only file so that a host
//     program listening on one (nvim --listen, tmux -S, an ssh ControlPath,
//     a Postgres socket directory) cannot be reached from inside.
//   - What host tools execute on their own (git configuration with
//     executable keys, hooks, gitdir pointers, .envrc, .vscode/tasks.json,
//     .devcontainer/): Inspect snapshots it at launch and Changes names what
//     the agent created or changed by teardown.
//
// A walk is bounded by Limits (DefaultLimits: 200000 entries, 64 levels,
// 1 MiB read per file, 4096 sockets); a walk that reaches a bound says so in
// Snapshot.Capped, and what lies beyond it is neither covered nor compared.
package workspace
