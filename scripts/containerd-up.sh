#!/usr/bin/env bash
# containerd-up.sh: start agentbox's private containerd for the containerd
# engine's tests, idempotently. If its socket already answers, it does
# nothing. The daemon has its own config, root, state and sockets, so it
# never touches a system containerd (Docker's or Kubernetes'), and a
# system one never sees agentbox's test containers.
#
# Needs: Debian's containerd (containerd, ctr, containerd-shim-runc-v2) and
# runc; installed here when missing (root).
#
# containerd-up.sh LINE starts, the same way, a private daemon of another
# release line instead (LINE is a directory of tools/containerd: 1.7, 2.x):
# its containerd and runc shim are built by scripts/containerd-build.sh
# (cached by version), its root, state and log are named by the line
# (/var/lib/agentbox-containerd-LINE, /run/agentbox-containerd-LINE,
# /var/log/agentbox-containerd-LINE.log), and a daemon of that line that
# answers with another version (the pin moved) is stopped and replaced.
# Debian's ctr (which talks to every daemon version) checks that it answers.
#
# Environment:
#   AGENTBOX_CONTAINERD_ROOT   its root (default /var/lib/agentbox-containerd)
#   AGENTBOX_CONTAINERD_STATE  its state and socket directory (default /run/agentbox-containerd)
#   CONTAINERD_UP_TIMEOUT      seconds to wait for it (default 30)
#   CONTAINERD_UP_LOG          its log (default /var/log/agentbox-containerd.log)
# The tests find the socket at $AGENTBOX_CONTAINERD_STATE/containerd.sock
# (AGENTBOX_TEST_CONTAINERD overrides it there).
set -euo pipefail

line=${1:-}
suffix=${line:+-$line}
root=${AGENTBOX_CONTAINERD_ROOT:-/var/lib/agentbox-containerd$suffix}
state=${AGENTBOX_CONTAINERD_STATE:-/run/agentbox-containerd$suffix}
sock=$state/containerd.sock
timeout=${CONTAINERD_UP_TIMEOUT:-30}
log=${CONTAINERD_UP_LOG:-/var/log/agentbox-containerd$suffix.log}
config=$root/config.toml

# The daemon: Debian's, or the built one of LINE with its own shim first
# on its PATH (containerd looks the shim up in PATH before its own
# directory).
daemon=containerd
want=
if [ -n "$line" ]; then
	bindir=$("$(dirname "$0")/containerd-build.sh" "$line")
	daemon=$bindir/containerd
	want=$("$daemon" --version | awk '{print $3}')
fi

answers() { ctr --address "$sock" version >/dev/null 2>&1; }
serving() { ctr --address "$sock" version 2>/dev/null | awk '/Version:/ {v=$2} END {print v}'; }

if answers; then
	if [ -z "$want" ] || [ "$(serving)" = "$want" ]; then
		echo "containerd-up: private containerd already answers on $sock"
		exit 0
	fi
	old=$(cat "$state/containerd.pid" 2>/dev/null || true)
	echo "containerd-up: $sock answers with containerd $(serving), not $want; stopping pid ${old:-?}"
	if [ -z "$old" ] || ! kill "$old" 2>/dev/null; then
		echo "containerd-up: cannot stop the daemon on $sock (no pid in $state/containerd.pid)" >&2
		exit 1
	fi
	for _ in $(seq "$timeout"); do
		kill -0 "$old" 2>/dev/null || break
		sleep 1
	done
	rm -f "$state/containerd.pid"
fi
if [ "$(id -u)" != 0 ]; then
	echo "containerd-up: the private containerd is not running and starting it needs root (run: sudo $0)" >&2
	exit 1
fi
missing=()
for p in containerd runc; do
	dpkg-query -W -f '${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "containerd-up: installing ${missing[*]}"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

mkdir -p "$root" "$state"
chmod 0711 "$root" "$state"
# Version 2 of the config format is read by containerd 1.6, 1.7 and 2.x.
# CRI is off (no CNI, no image service for Kubernetes), and so are the
# plugins that only images need; the runc shim and a snapshotter stay.
cat >"$config.tmp" <<CONF
version = 2
root = "$root"
state = "$state"
disabled_plugins = ["io.containerd.grpc.v1.cri"]

[grpc]
  address = "$sock"
  uid = 0
  gid = 0

[ttrpc]
  address = "$sock.ttrpc"

[debug]
  address = "$state/debug.sock"
  level = "info"

CONF
mv "$config.tmp" "$config"

# The shims of a 1.6 daemon put their sockets in /run/containerd/s whatever
# the state directory (named by a hash of the address, so they never
# collide with a system daemon's).
mkdir -p /run/containerd

if [ -f "$state/containerd.pid" ] && kill -0 "$(cat "$state/containerd.pid")" 2>/dev/null; then
	echo "containerd-up: pid $(cat "$state/containerd.pid") is starting; waiting"
else
	mkdir -p "$(dirname "$log")"
	echo "containerd-up: starting containerd (config $config, log $log)"
	# setsid: the daemon must outlive this script and the shell that ran it.
	PATH=${bindir:+$bindir:}$PATH setsid "$daemon" --config "$config" >>"$log" 2>&1 </dev/null &
	echo $! >"$state/containerd.pid"
fi

for _ in $(seq "$timeout"); do
	if answers; then
		echo "containerd-up: private containerd ready on $sock ($(serving))"
		exit 0
	fi
	sleep 1
done
echo "containerd-up: containerd did not answer on $sock within ${timeout}s; last log lines:" >&2
tail -n 20 "$log" >&2 || true
exit 1
