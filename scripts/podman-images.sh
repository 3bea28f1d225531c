#!/usr/bin/env bash
# podman-images.sh: import the audit tests' image, agentbox-test/busybox:latest
# (the root file system of scripts/busybox-rootfs.sh, the one the Docker tests
# run), into root's Podman store and into the test user's rootless store.
# Nothing is pulled. Idempotent: a store whose image carries the current
# content label is left alone.
#
# Needs: root, podman, busybox-static, the test user and its runtime
# directory (scripts/podman-setup.sh makes both).
set -euo pipefail

image=agentbox-test/busybox:latest
test_user=${TEST_USER:-agentbox-test}
dir=$(cd "$(dirname "$0")" && pwd)
version=$("$dir/busybox-rootfs.sh" version)

log() { echo "podman-images: $*"; }

if [ "$(id -u)" != 0 ]; then
	echo "podman-images: run as root; it imports for $test_user itself (run: sudo $0)" >&2
	exit 1
fi

uid=$(id -u "$test_user")
home=$(getent passwd "$test_user" | cut -d: -f6)
# as_user runs podman as the test user the way scripts/test-rootless.sh does:
# a clean environment with the user's runtime directory.
as_user() {
	runuser -u "$test_user" -- env -i \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		HOME="$home" USER="$test_user" LANG=C.UTF-8 XDG_RUNTIME_DIR="/run/user/$uid" "$@"
}

label() { "$@" image inspect --format '{{index .Labels "agentbox.test.version"}}' "$image" 2>/dev/null || true; }
id_of() { "$@" image inspect --format '{{.Id}}' "$image" 2>/dev/null || true; }

import() {
	"$@" import --quiet \
		--change 'CMD ["sleep","3600"]' \
		--change 'ENV PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin' \
		--change "LABEL agentbox.test.version=$version" \
		- "$image" >/dev/null
}

tar=$(mktemp)
trap 'rm -f "$tar"' EXIT
built=false
for who in root "$test_user"; do
	run=(podman)
	[ "$who" = root ] || run=(as_user podman)
	# The test user's podman starts in its home; root's cwd may be closed to it.
	if [ "$(cd / && label "${run[@]}")" = "$version" ]; then
		log "$image is up to date for $who"
		continue
	fi
	$built || { "$dir/busybox-rootfs.sh" >"$tar"; built=true; }
	old=$(cd / && id_of "${run[@]}")
	(cd / && import "${run[@]}" <"$tar")
	# The tag moved to the new image: drop the old one, which nothing names.
	[ -z "$old" ] || (cd / && "${run[@]}" rmi "$old" >/dev/null 2>&1) || true
	log "imported $image for $who"
done
