#!/usr/bin/env bash
# podman-setup.sh: make real Podman work on this host for the audit's Podman
# tests, rootful and rootless (as the test user), then import the test image.
# Run as root by scripts/test-setup.sh, after the packages (podman,
# slirp4netns, uidmap, runc, acl) and the test user exist. Idempotent: each
# step looks first and changes only what differs; docs/podman.md explains
# every step.
#
#   1. a containers.conf drop-in, written only with what this host needs:
#      - default_ulimits, when root lacks CAP_SYS_RESOURCE and its hard
#        RLIMIT_NOFILE is below the 1048576 that rootful podman 4.3 otherwise
#        asks the runtime for ("crun: setrlimit RLIMIT_NOFILE: Operation not
#        permitted");
#      - runtime = "runc", when cgroup2 is mounted beside cgroup v1 with
#        controllers in it, which crun 1.8 refuses ("cgroups in hybrid mode
#        not supported").
#      Podman is the only reader of containers.conf: no other program changes.
#   2. the test user's runtime directory /run/user/UID (XDG_RUNTIME_DIR), which
#      logind makes on a host that has it;
#   3. read-write access to /dev/net/tun for the test user alone (an ACL), when
#      the node's mode keeps it out: rootless networking (slirp4netns) needs it,
#      and without udev the node keeps the kernel's 0600;
#   4. the image agentbox-test/busybox:latest for root and the test user
#      (scripts/podman-images.sh).
set -euo pipefail

test_user=${TEST_USER:-agentbox-test}
conf=/etc/containers/containers.conf.d/50-agentbox-test.conf
pid_max_file=/proc/sys/kernel/pid_max
# podman 4.3's RLimitDefaultValue: what rootful podman asks for when no
# default_ulimits entry names nofile or nproc.
podman_default=1048576

log() { echo "podman-setup: $*"; }

if [ "$(id -u)" != 0 ]; then
	echo "podman-setup: needs root to write $conf and prepare $test_user (run: sudo $0)" >&2
	exit 1
fi
for bin in podman runc setfacl; do
	command -v "$bin" >/dev/null || { echo "podman-setup: $bin not found (run scripts/test-setup.sh, which installs it)" >&2; exit 1; }
done
id "$test_user" >/dev/null 2>&1 || { echo "podman-setup: no user $test_user (run scripts/test-setup.sh)" >&2; exit 1; }

# has_cap N: the effective set of this shell holds capability number N.
has_cap() {
	local eff
	eff=$(awk '/^CapEff:/ {print $2}' /proc/self/status)
	(((16#$eff >> $1) & 1))
}

# below LIMIT N: LIMIT (a number or "unlimited") is below N.
below() { [ "$1" != unlimited ] && [ "$1" -lt "$2" ]; }

# ulimits_conf prints the default_ulimits line this host needs, or nothing.
# Raising a hard limit needs CAP_SYS_RESOURCE (number 24). Once
# default_ulimits is set, containers.conf's built-in default (nproc at
# kernel.pid_max, to which podman lowers its own limit) is gone, so nproc is
# written too: at pid_max, or the hard limit when that is lower.
ulimits_conf() {
	local nofile nproc
	nofile=$(ulimit -Hn)
	has_cap 24 && return 0
	below "$nofile" "$podman_default" || return 0
	nproc=$(cat "$pid_max_file")
	below "$(ulimit -Hu)" "$nproc" && nproc=$(ulimit -Hu)
	cat <<-EOF
		# This host's root lacks CAP_SYS_RESOURCE and its hard RLIMIT_NOFILE is
		# $nofile: rootful podman would ask the runtime for nofile=$podman_default and
		# fail with "setrlimit RLIMIT_NOFILE: Operation not permitted". nproc is
		# kernel.pid_max (or the hard limit, when lower), containers.conf's own
		# default, which this line replaces. Rootless podman reads this file
		# too: its containers get the same limits, which its users inherit here.
		default_ulimits = ["nofile=$nofile:$nofile", "nproc=$nproc:$nproc"]
	EOF
}

# hybrid_cgroups: cgroup v1 with a cgroup2 hierarchy that holds controllers.
hybrid_cgroups() {
	local m
	[ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ] && return 1
	for m in $(findmnt -n -l -t cgroup2 -o TARGET); do
		# cgroup files report a size of 0: read them.
		[ -n "$(tr -d '[:space:]' <"$m/cgroup.controllers" 2>/dev/null)" ] && return 0
	done
	return 1
}

runtime_conf() {
	hybrid_cgroups || return 0
	cat <<-EOF
		# cgroup2 is mounted beside cgroup v1 and holds controllers ($(findmnt -n -l -t cgroup2 -o TARGET | paste -sd ' ')):
		# crun 1.8 refuses such a host ("cgroups in hybrid mode not supported");
		# runc runs containers on it.
		runtime = "runc"
	EOF
}

# write_conf installs the drop-in when its content differs, and removes it
# when this host needs none.
write_conf() {
	local ulimits runtime want
	ulimits=$(ulimits_conf)
	runtime=$(runtime_conf)
	if [ -z "$ulimits$runtime" ]; then
		[ -e "$conf" ] && { rm -f "$conf"; log "removed $conf: this host needs no Podman settings"; }
		return 0
	fi
	want="# Written by agentbox's scripts/podman-setup.sh (make setup) for the audit's
# Podman tests; see docs/podman.md. Read by root's and rootless podman alike;
# remove this file to undo.
"
	[ -n "$ulimits" ] && want+="
[containers]
$ulimits
"
	[ -n "$runtime" ] && want+="
[engine]
$runtime
"
	if [ "$(cat "$conf" 2>/dev/null)" = "$(printf '%s' "$want")" ]; then
		log "$conf is up to date"
		return 0
	fi
	mkdir -p "$(dirname "$conf")"
	printf '%s' "$want" >"$conf.tmp"
	mv "$conf.tmp" "$conf"
	log "wrote $conf"
}

runtime_dir() {
	local uid gid d
	uid=$(id -u "$test_user")
	gid=$(id -g "$test_user")
	d=/run/user/$uid
	if [ "$(stat -c '%u:%g %a' "$d" 2>/dev/null)" != "$uid:$gid 700" ]; then
		mkdir -p "$d"
		chown "$uid:$gid" "$d"
		chmod 700 "$d"
		log "made $d, the runtime directory of $test_user"
	fi
}

tun_access() {
	local tun=/dev/net/tun mode
	[ -c "$tun" ] || { log "no $tun: rootless podman has only --network none and host here"; return 0; }
	runuser -u "$test_user" -- test -r "$tun" -a -w "$tun" && return 0
	mode=$(stat -c %a "$tun")
	setfacl -m "u:$test_user:rw" "$tun"
	log "granted $test_user read-write on $tun (an ACL; its mode $mode is left alone)"
}

write_conf
runtime_dir
tun_access
"$(cd "$(dirname "$0")" && pwd)/podman-images.sh"
