// Package host captures, once per invocation, the facts about this machine
// and the invoking user that planning needs: ids, home directories, the
// cgroup layout and whether limits can be applied, the active LSMs, and an
// os-backed implementation of policy.FS. Everything it reads is recorded in
// a policy.Host, so that planning itself stays free of side effects and
// tests can substitute captured facts.
//
// The facts that `agentbox doctor` also reports (the invoking user's
// account, the cgroup layout and limits, AppArmor, the mount table) are
// read through Tree, from a root directory, so that doctor's captured host
// trees and this machine go through the same code; Homes is the one list of
// home directories for the planner and every audit. Passwd files are read
// with github.com/moby/sys/user, the mount table with
// github.com/moby/sys/mountinfo.
package host
