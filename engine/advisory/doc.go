// Package advisory is the one table of known vulnerabilities of the OCI
// runtimes agentbox drives (runc, crun), and the one judgement of a
// runtime against it for a way of launching the sandbox. `agentbox doctor`
// and `agentbox run` both ask Judge, so that they tell the same story.
//
// The table (advisories.json, embedded) is data with its sources: per
// entry the affected and first fixed releases of each branch, the
// distributions' backported package versions, and Needs, the launch
// conditions the attack needs (an attacker-controlled --rootfs, no user
// namespace, a rootless runtime, the runtime's exec). Judge is pure: given
// the table, a runtime's name, version and package, the distribution and a
// Mode, it returns one Finding per entry: not affected, fixed, affected but
// not exposed in this mode (with the reason), affected and exposed, or
// undetermined. Reading the version (running `runc --version`, asking the
// package manager) is the caller's side effect.
//
// Security-relevant defaults:
//
//   - Distributions backport fixes, so a packaged runtime is judged by its
//     package version against the distribution's entry; where the table has
//     no data for it and the upstream version predates the fix, the verdict
//     is undetermined with the command that settles it, never fixed.
//   - An entry without Needs is exposed in every launch; a condition is only
//     listed where the advisory shows the attack cannot work without it.
//   - Exposed or undetermined refuses the launch (Finding.Blocks), unless
//     the policy accepts the runtime-vulnerable finding with a reason; low
//     severity and hardening entries are residuals only.
//
// What it does not do: the table is only as current as its Checked date,
// and it has no entries for runsc.
package advisory
