#!/usr/bin/env bash
# runsc-build.sh: build gVisor's runsc for the gVisor integration test,
# idempotently, and print its path. If it is already built, it does nothing.
#
# Debian 12's runsc (0.0~20221219) has no --pass-fd, so agentbox refuses it
# (agentbox-init cannot get its channel). tools/runsc is a Go module of its
# own that pins gVisor's Go-buildable branch at one pseudo-version (the go
# command checks it against go.sum and the checksum database); the binary is
# cached outside the clone, keyed by that version:
#   /var/cache/agentbox-test/runsc-VERSION/runsc
# The first build takes about 3.5 minutes on 2 cores (docs/gvisor.md).
#
# Environment:
#   AGENTBOX_RUNSC_CACHE   cache root (default /var/cache/agentbox-test)
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
tools=$here/tools/runsc
ver=$(awk '$1 == "require" && $2 == "gvisor.dev/gvisor" {print $3; exit} $1 == "gvisor.dev/gvisor" && $2 ~ /^v/ {print $2; exit}' "$tools/go.mod")
if [ -z "$ver" ]; then
	echo "runsc-build: cannot read the gvisor.dev/gvisor version from $tools/go.mod" >&2
	exit 1
fi
dir=${AGENTBOX_RUNSC_CACHE:-/var/cache/agentbox-test}/runsc-$ver
bin=$dir/runsc
if [ ! -x "$bin" ]; then
	echo "runsc-build: building runsc $ver into $dir (the first build takes minutes)" >&2
	mkdir -p "$dir"
	tmp=$(mktemp "$dir/runsc.build.XXXXXX")
	trap 'rm -f "$tmp"' EXIT
	(
		cd "$tools"
		CGO_ENABLED=0 go build -trimpath -ldflags "-X gvisor.dev/gvisor/runsc/version.version=$ver" -o "$tmp" gvisor.dev/gvisor/runsc
	)
	chmod 0755 "$tmp"
	mv "$tmp" "$bin"
	trap - EXIT
fi
echo "$bin"
