#!/usr/bin/env bash
# containerd-build.sh LINE: build the containerd daemon and its runc shim of
# one release line (LINE is a directory of tools/containerd: 1.7, 2.x) for
# the containerd engine's version tests, idempotently, and print the
# directory that holds them. If they are already built, it does nothing.
#
# Debian 12 ships containerd 1.6.20 only; the engine must also work against
# the 1.7 and 2.x daemons that other hosts run (docs/containerd.md,
# "Versions"). Each tools/containerd/LINE is a Go module of its own that
# pins one containerd release (the go command checks it against go.sum and
# the checksum database); the binaries are cached outside the clone, keyed
# by that version:
#   /var/cache/agentbox-test/containerd-VERSION/{containerd,containerd-shim-runc-v2}
# They are built as containerd's own Makefile builds them, without cgo (the
# shim is static there too) and without the plugins agentbox's private
# daemon does not load: CRI (scripts/containerd-up.sh disables it), the
# btrfs, devmapper, zfs and aufs snapshotters, tracing. The first build of
# a line takes 2 to 6 minutes on 2 cores (both lines: about 6 minutes on an
# idle machine, 10 on a loaded one, measured with an empty build cache).
#
# Environment:
#   AGENTBOX_CONTAINERD_CACHE   cache root (default /var/cache/agentbox-test)
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
line=${1:?usage: containerd-build.sh LINE (a directory of tools/containerd: 1.7, 2.x)}
tools=$here/tools/containerd/$line
case $line in */* | .*) echo "containerd-build: bad release line $line" >&2; exit 1 ;; esac
if [ ! -f "$tools/go.mod" ]; then
	echo "containerd-build: no release line $line (no $tools/go.mod)" >&2
	exit 1
fi
# The module is github.com/containerd/containerd (1.x) or .../v2 (2.x).
read -r pkg ver < <(awk '$1 == "require" && $2 ~ /^github\.com\/containerd\/containerd(\/v[0-9]+)?$/ {print $2, $3; exit}
	$1 ~ /^github\.com\/containerd\/containerd(\/v[0-9]+)?$/ && $2 ~ /^v/ {print $1, $2; exit}' "$tools/go.mod") || true
if [ -z "${ver:-}" ]; then
	echo "containerd-build: cannot read the containerd version from $tools/go.mod" >&2
	exit 1
fi
tags="urfave_cli_no_docs no_cri no_btrfs no_devmapper no_zfs no_aufs no_tracing"
# containerd's Makefile builds the 2.x shim without the gRPC server (the
# shim speaks ttrpc); the 1.7 Makefile has no such tag.
shimtags=$tags
case $pkg in */v[2-9]) shimtags="$tags no_grpc" ;; esac
ldflags="-s -w -X $pkg/version.Version=$ver -X $pkg/version.Package=$pkg"
# What the binaries were built from and how: a change of any of it builds
# them again.
stamp="$pkg $ver CGO_ENABLED=0 -tags $tags; shim -tags $shimtags"
dir=${AGENTBOX_CONTAINERD_CACHE:-/var/cache/agentbox-test}/containerd-${ver#v}

built() {
	[ -x "$dir/containerd" ] && [ -x "$dir/containerd-shim-runc-v2" ] &&
		[ "$(cat "$dir/BUILD" 2>/dev/null)" = "$stamp" ]
}

if ! built; then
	mkdir -p "$dir"
	# One build at a time per version: a second caller waits and finds it built.
	exec 9>"$dir/.lock"
	flock 9
	if ! built; then
		echo "containerd-build: building containerd $ver into $dir (the first build takes minutes)" >&2
		rm -f "$dir/BUILD"
		tmp=$(mktemp -d "$dir/build.XXXXXX")
		trap 'rm -rf "$tmp"' EXIT
		(
			cd "$tools"
			export CGO_ENABLED=0
			go build -trimpath -tags "$tags" -ldflags "$ldflags" -o "$tmp/containerd" "$pkg/cmd/containerd"
			go build -trimpath -tags "$shimtags" -ldflags "$ldflags" -o "$tmp/containerd-shim-runc-v2" "$pkg/cmd/containerd-shim-runc-v2"
		)
		chmod 0755 "$tmp/containerd" "$tmp/containerd-shim-runc-v2"
		mv "$tmp/containerd" "$tmp/containerd-shim-runc-v2" "$dir/"
		echo "$stamp" >"$tmp/BUILD"
		mv "$tmp/BUILD" "$dir/BUILD"
		rm -rf "$tmp"
		trap - EXIT
	fi
	exec 9>&-
fi
echo "$dir"
