#!/usr/bin/env bash
# test-rootless.sh: run the launcher's integration suite a second time as the
# unprivileged user agentbox-test (created by test-setup.sh), so that
# rootless agentbox is tested for real, plus every test named *Rootless
# (which need an ordinary user and are left out of the root run by name):
# userns's, and the audit's of rootless Podman.
# Run as root. Tests named *AsRoot need root by design and are left out here
# by name (not skipped), so that strict mode stays meaningful.
set -euo pipefail

test_user=agentbox-test
if [ "$(id -u)" != 0 ]; then
	echo "test-rootless: run as root; it switches to $test_user itself" >&2
	exit 1
fi
id "$test_user" >/dev/null 2>&1 || { echo "test-rootless: no user $test_user (run scripts/test-setup.sh)" >&2; exit 1; }

work=$(mktemp -d /tmp/agentbox-rootless.XXXXXX)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
CGO_ENABLED=0 go build -o "$work/agentbox" ./cmd/agentbox
CGO_ENABLED=0 go build -tags agentbox_ext -o "$work/agentbox-ext" ./cmd/agentbox # audit, compose, kube (README, "Three binaries")
CGO_ENABLED=0 go build -tags agentbox_containerd -o "$work/agentbox-containerd" ./cmd/agentbox # the containerd engine
CGO_ENABLED=0 go build -o "$work/agentbox-init" ./cmd/agentbox-init
CGO_ENABLED=0 go build -o "$work/launchertest" ./launcher/internal/launchertest # test-only: pauses at a step
go test -c -tags integration -o "$work/agentbox.test" ./cmd/agentbox
go test -c -tags integration -o "$work/userns.test" ./userns
go test -c -tags integration -o "$work/audit.test" ./audit
chmod 755 "$work"/*

# The agent CLIs of scripts/agents-install.sh, hard-linked (as root, on the
# same filesystem) out of /var, which the planner refuses to bind, so that
# the closure matrix and the escape self-test run them in place.
agents_cache=/var/cache/agentbox-test/npm
if [ -d "$agents_cache" ]; then
	cp -al "$agents_cache" "$work/agents" 2>/dev/null || cp -a "$agents_cache" "$work/agents"
fi

home=$(getent passwd "$test_user" | cut -d: -f6)
# The user's runtime directory (scripts/podman-setup.sh makes it, as logind
# would): rootless Podman keeps its state and API socket there.
runtime_dir=/run/user/$(id -u "$test_user")
cd "$work"
as_user() {
	runuser -u "$test_user" -- env -i \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		HOME="$home" USER="$test_user" LANG=C.UTF-8 XDG_RUNTIME_DIR="$runtime_dir" \
		AGENTBOX_BIN="$work/agentbox" AGENTBOX_TEST_STRICT="${AGENTBOX_TEST_STRICT:-}" \
		AGENTBOX_LAB_AUDIT="${AGENTBOX_LAB_AUDIT:-}" AGENTBOX_AGENTS_CACHE="$work/agents" "$@"
}
echo "test-rootless: cmd/agentbox as $test_user"
as_user "$work/agentbox.test" -test.count=1 -test.timeout=10m -test.skip 'AsRoot$' ${TESTFLAGS:-}
echo "test-rootless: userns *Rootless tests as $test_user"
as_user "$work/userns.test" -test.count=1 -test.timeout=5m -test.run 'Rootless$' ${TESTFLAGS:-}
echo "test-rootless: audit *Rootless tests (rootless Podman) as $test_user"
as_user "$work/audit.test" -test.count=1 -test.timeout=5m -test.run 'Rootless$' ${TESTFLAGS:-}
