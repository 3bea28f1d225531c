#!/usr/bin/env bash
# test-setup.sh: install and start everything agentbox's tests need, on a
# Debian host, as root. Idempotent: what is already there is left alone.
#
#   - Debian packages: the OCI runtimes, libseccomp for the cgo tests, a
#     busybox root, the Docker engine and compose, id-mapping and ACL tools;
#   - the unprivileged user agentbox-test (with subordinate ids) that owns
#     test workspaces and runs the rootless suite;
#   - a running Docker engine and the locally built test images;
#   - runsc (gVisor; Debian 12's cannot pass files, so agentbox refuses it
#     and the tests assert that refusal);
#   - Podman, rootful and rootless, configured for this host, with the same
#     test image (scripts/podman-setup.sh);
#   - the Codex CLI and Claude Code from the npm registry.
set -euo pipefail

packages=(runc crun runsc libseccomp-dev gcc busybox-static docker.io docker-compose containerd
	uidmap acl iproute2 nftables apparmor util-linux procps file podman slirp4netns git)
test_user=agentbox-test

log() { echo "test-setup: $*"; }

if [ "$(id -u)" != 0 ]; then
	echo "test-setup: needs root to install packages and create the test user (run: sudo $0)" >&2
	exit 1
fi

missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f '${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	log "installing ${missing[*]}"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! id "$test_user" >/dev/null 2>&1; then
	log "creating user $test_user"
	useradd --create-home --shell /bin/bash "$test_user"
fi
# Subordinate ids for the rootless suite; useradd adds them on Debian, but
# a user created elsewhere may lack them.
for f in /etc/subuid /etc/subgid; do
	if ! grep -q "^$test_user:" "$f" 2>/dev/null; then
		flag=--add-subuids
		[ "$f" = /etc/subgid ] && flag=--add-subgids
		start=$((200000 + $(id -u "$test_user") * 65536))
		log "adding $f range for $test_user"
		usermod "$flag" "$start-$((start + 65535))" "$test_user"
	fi
done

dir=$(cd "$(dirname "$0")" && pwd)
"$dir/docker-up.sh"
"$dir/docker-images.sh"
"$dir/podman-setup.sh"
# The real agent CLIs for the end-to-end gateway tests (npm registry).
command -v npm >/dev/null || { log "installing nodejs and npm"; apt-get update -qq; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null; }
"$dir/gateway-install-agents.sh"
log "ready"
