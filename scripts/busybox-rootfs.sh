#!/usr/bin/env bash
# busybox-rootfs.sh: write the root file system of the audit tests' image,
# agentbox-test/busybox, to stdout as a tar stream, from this machine's files
# only. scripts/docker-images.sh imports it into Docker, scripts/podman-images.sh
# into root's and the test user's Podman; nothing is pulled.
#
#   busybox-static with its applet symlinks, a nobody and an agent user, and
#   /usr/local/bin/{codex,claude,gemini,aider,goose} stand-ins that only sleep
#   (the audit reads their command line, nothing runs an agent).
#
#   busybox-rootfs.sh version   print the content version: the importers label
#                               the image with it and rebuild when it changes
#
# Needs: busybox-static (apt-get install -y busybox-static).
set -euo pipefail

version=2 # bump when the content below changes
if [ "${1:-}" = version ]; then
	echo "$version"
	exit 0
fi

busybox=${BUSYBOX:-/bin/busybox}
# ldd (libc-bin, always installed) says "not a dynamic executable" for a
# static binary.
linkage=$(LC_ALL=C ldd "$busybox" 2>&1 || true)
if [ ! -x "$busybox" ] || [[ $linkage != *"not a dynamic executable"* ]]; then
	echo "busybox-rootfs: $busybox is not a static busybox (run: apt-get install -y busybox-static)" >&2
	exit 1
fi
if [ -t 1 ]; then
	echo "busybox-rootfs: stdout is a terminal; pipe the tar stream into an import" >&2
	exit 2
fi

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
# mktemp makes the directory 0700, and the tar's "./" carries that mode: a
# rootless store (vfs) keeps it, and --user 1000 could not reach /bin.
chmod 755 "$root"
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
tar -C "$root" -c .
