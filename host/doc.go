// Package host captures, once per invocation, the facts about this machine
// and the invoking user that planning needs: ids, home directories, the
// cgroup layout and whether limits can be applied, the active LSMs, and an
// os-backed implementation of policy.FS. Everything it reads is recorded in
// a policy.Host, so that planning itself stays free of side effects and
// tests can substitute captured facts.
package host
