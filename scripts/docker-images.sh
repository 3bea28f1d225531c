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
# same content label is kept.
set -euo pipefail

image=agentbox-test/busybox:latest
busybox=${BUSYBOX:-/bin/busybox}
version=1 # bump when the image content below changes

# ldd (libc-bin, always installed) says "not a dynamic executable" for a
# static binary.
linkage=$(LC_ALL=C ldd "$busybox" 2>&1 || true)
if [ ! -x "$busybox" ] || [[ $linkage != *"not a dynamic executable"* ]]; then
	echo "docker-images: $busybox is not a static busybox (run: apt-get install -y busybox-static)" >&2
	exit 1
fi
if ! docker info >/dev/null 2>&1; then
	echo "docker-images: no engine answers (run: scripts/docker-up.sh)" >&2
	exit 1
fi
have=$(docker image inspect --format '{{index .Config.Labels "agentbox.test.version"}}' "$image" 2>/dev/null || true)
if [ "$have" = "$version" ]; then
	echo "docker-images: $image is up to date"
	exit 0
fi

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,usr/local/bin,etc,tmp,home,root,proc,sys,dev,run,workspace}
chmod 1777 "$root/tmp"
cp "$busybox" "$root/bin/busybox"
for applet in $("$busybox" --list-full); do
	[ -e "$root/$applet" ] || ln -s /bin/busybox "$root/$applet"
done
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\nagent:x:1000:1000:agent:/home/agent:/bin/sh\n' >"$root/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\nagent:x:1000:\n' >"$root/etc/group"
for agent in codex claude gemini aider goose; do
	printf '#!/bin/sh\n# stand-in for the %s agent: it ignores its flags and idles\nexec sleep 3600\n' "$agent" >"$root/usr/local/bin/$agent"
	chmod 755 "$root/usr/local/bin/$agent"
done

tar -C "$root" -c . | docker import \
	--change 'CMD ["sleep","3600"]' \
	--change 'ENV PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin' \
	--change "LABEL agentbox.test.version=$version" \
	- "$image" >/dev/null
echo "docker-images: built $image"
