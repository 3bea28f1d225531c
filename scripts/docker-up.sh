#!/usr/bin/env bash
# docker-up.sh: start a local Docker engine for agentbox's audit integration
# tests, idempotently. If the socket already answers, it does nothing.
#
# Needs: docker.io (dockerd, containerd, runc) from Debian; the docker CLI.
# Environment:
#   DOCKER_UP_TIMEOUT  seconds to wait for the engine (default 60)
#   DOCKER_UP_LOG      dockerd log file (default /var/log/agentbox-dockerd.log)
# Nothing is pulled and no registry is contacted: the test images are built
# locally by scripts/docker-images.sh.
set -euo pipefail

sock=/var/run/docker.sock
timeout=${DOCKER_UP_TIMEOUT:-60}
log=${DOCKER_UP_LOG:-/var/log/agentbox-dockerd.log}

answers() { DOCKER_HOST="unix://$sock" docker info >/dev/null 2>&1; }

if answers; then
	echo "docker-up: engine already answers on $sock"
	exit 0
fi

if [ "$(id -u)" != 0 ]; then
	echo "docker-up: the engine is not running and starting it needs root (run: sudo $0)" >&2
	exit 1
fi
for bin in dockerd docker containerd runc; do
	if ! command -v "$bin" >/dev/null; then
		echo "docker-up: $bin not found (run: apt-get install -y docker.io)" >&2
		exit 1
	fi
done

# A stale pid file from a dead daemon stops dockerd from starting.
if [ -f /var/run/docker.pid ] && ! kill -0 "$(cat /var/run/docker.pid)" 2>/dev/null; then
	rm -f /var/run/docker.pid
fi

if ! pgrep -x dockerd >/dev/null; then
	mkdir -p "$(dirname "$log")"
	echo "docker-up: starting dockerd (log: $log)"
	# setsid: the daemon must outlive this script and the shell that ran it.
	setsid dockerd --host "unix://$sock" >>"$log" 2>&1 </dev/null &
fi

for _ in $(seq "$timeout"); do
	if answers; then
		echo "docker-up: engine ready on $sock"
		exit 0
	fi
	sleep 1
done
echo "docker-up: dockerd did not answer on $sock within ${timeout}s; last log lines:" >&2
tail -n 20 "$log" >&2 || true
exit 1
