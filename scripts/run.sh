#!/usr/bin/env bash
# run.sh: what `make run` does after building: make sure an OCI runtime is
# installed, then run agentbox's main job around the current directory: an
# interactive shell in the sandbox when there is a terminal, a short scripted
# demo of the boundary otherwise.
set -euo pipefail

dir=$(cd "$(dirname "$0")/.." && pwd)
agentbox="$dir/bin/agentbox"

if ! command -v runc >/dev/null; then
	if [ "$(id -u)" = 0 ]; then
		echo "run: installing runc" >&2
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq runc >/dev/null
	else
		echo "run: runc is missing (install it with: sudo apt-get install runc)" >&2
		exit 4
	fi
fi

if [ -t 0 ] && [ -t 1 ]; then
	echo "agentbox: a sandboxed shell around $PWD; type 'exit' to leave" >&2
	exec "$agentbox" run -- bash --norc -i
fi

exec "$agentbox" run -- sh -c '
echo "== inside agentbox: $(id)"
echo "-- capabilities and filters:"; grep -E "^(CapEff|CapBnd|NoNewPrivs|Seccomp):" /proc/self/status
echo "-- id map (container host count):"; cat /proc/self/uid_map
echo "-- network interfaces: $(ls /sys/class/net | tr "\n" " ")"
echo "-- writing /etc:"; touch /etc/agentbox-demo 2>&1 || true
echo "-- mounting a tmpfs:"; mount -t tmpfs none /mnt 2>&1 || true
echo "-- home is fresh: HOME=$HOME, $(ls -A "$HOME" | wc -l) entries; /root: $(ls -d /root 2>&1)"
echo "-- the workspace $PWD is writable:"; echo demo > .agentbox-demo && ls -l .agentbox-demo && rm .agentbox-demo
echo "== done"
'
