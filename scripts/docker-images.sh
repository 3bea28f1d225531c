#!/usr/bin/env bash
# docker-images.sh: build the images that agentbox's audit integration tests
# run, from this machine's files only. Nothing is pulled from a registry.
#
#   agentbox-test/busybox:latest  busybox-static with its applet symlinks, a
#                                 nobody user, and /usr/local/bin/{codex,claude}
#                                 stand-ins that only sleep (the audit reads
#                                 their command line, nothing runs an agent).
#
# Needs: a running engine (scripts/docker-up.sh) and busybox-static
# (apt-get install -y busybox-static). Idempotent: an existing image with the
# same content label is kept. The root file system is busybox-rootfs.sh's,
# which scripts/podman-images.sh imports into Podman too.
set -euo pipefail

image=agentbox-test/busybox:latest
dir=$(cd "$(dirname "$0")" && pwd)
version=$("$dir/busybox-rootfs.sh" version)

if ! docker info >/dev/null 2>&1; then
	echo "docker-images: no engine answers (run: scripts/docker-up.sh)" >&2
	exit 1
fi
have=$(docker image inspect --format '{{index .Config.Labels "agentbox.test.version"}}' "$image" 2>/dev/null || true)
if [ "$have" = "$version" ]; then
	echo "docker-images: $image is up to date"
	exit 0
fi

"$dir/busybox-rootfs.sh" | docker import \
	--change 'CMD ["sleep","3600"]' \
	--change 'ENV PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin' \
	--change "LABEL agentbox.test.version=$version" \
	- "$image" >/dev/null
echo "docker-images: built $image"
