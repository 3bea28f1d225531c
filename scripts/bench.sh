#!/usr/bin/env bash
# bench.sh — `make bench`: agentbox measured beside a baseline in the same
# run, printed as medians and ratios, never asserted as times.
#
#   issue 2  agentbox run -- true  vs  runc run + runc delete of the same
#            hardened bundle (and crun where it is installed)
#   issue 14 targets: runc path <= 1.5x bare runc; crun <= 1.0x bare *runc*;
#            --engine containerd <= 1.2x a bare `ctr run` of the same bundle
#            on the same private daemon (scripts/containerd-up.sh)
#   issue 4  the probe suite: inside real sandboxes and in-process on the host
#   issue 3  audit of a 50-service compose file and of a running container
#   issue 5  the gateway beside a direct loopback connection (netpolicy)
#   seccomp  compiling the profile, native only vs with the 32-bit ABIs, and
#            agentbox's pure-Go compiler (purego-ARCH) vs libseccomp
#   issue 13 git status on a 30,000-file tree and a gcc compile inside
#            agentbox run, with the seccomp notification listener vs the
#            plain filter (AGENTBOX_BENCH_NO_LISTENER=1), interleaved
#
# Needs root (it starts sandboxes), runc, and what `make build` and the
# Debian packages of `make setup` give. Sends traffic to loopback only.
# Idempotent: everything goes to $BENCH_DIR (default /tmp/agentbox-bench),
# which it empties first. BENCH_N sets the launch iterations (default 30).
set -euo pipefail
cd "$(dirname "$0")/.."

N="${BENCH_N:-30}"
OUT="${BENCH_DIR:-/tmp/agentbox-bench}"
MARK=.agentbox-bench
failed=()

if [[ "$(id -u)" != 0 ]]; then
	echo "bench.sh: run as root (sudo make bench): the launch benchmarks start sandboxes as root" >&2
	exit 4
fi
if ! command -v runc >/dev/null; then
	echo "bench.sh: runc not found; install it with: apt-get install runc" >&2
	exit 4
fi
if [[ -e "$OUT" && ! -e "$OUT/$MARK" ]]; then
	echo "bench.sh: $OUT exists and is not a bench directory; remove it or set BENCH_DIR" >&2
	exit 2
fi

section() { printf '\n==== %s\n' "$*"; }

# gobench NAME ARGS...: run go test benchmarks, keep the output for the
# summary; a failure is reported and the summary shows the row as not run.
gobench() {
	local name="$1"
	shift
	echo "\$ go test $*"
	if ! go test "$@" 2>&1 | tee "$OUT/gobench/$name.txt"; then
		rm -f "$OUT/gobench/$name.txt"
		failed+=("$name")
		echo "bench.sh: the $name benchmarks failed (output above)"
	fi
}

# cleanup removes what the benchmarks leave: the baseline's cgroup parents
# and the audited container.
cleanup() {
	find /sys/fs/cgroup -maxdepth 3 -depth -type d -path '*/agentbox-bench*' -exec rmdir {} \; 2>/dev/null || true
	if command -v docker >/dev/null; then docker rm -f agentbox-bench-audit >/dev/null 2>&1 || true; fi
}
trap cleanup EXIT

make --no-print-directory -s build
rm -rf "$OUT"
mkdir -p "$OUT/gobench"
touch "$OUT/$MARK"
ROWS="$OUT/rows.jsonl"
CGO_ENABLED=0 go build -trimpath -o "$OUT/abbench" ./bench/abbench
ABB="$OUT/abbench"

section "machine"
date -u '+%Y-%m-%d %H:%M UTC'
echo "$(uname -sr); $(nproc) CPUs ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)); $(free -g | awk '/^Mem:/ {print $2}') GiB"
echo "$(go version); $(runc --version | head -1); $(command -v crun >/dev/null && crun --version | head -1 || echo 'crun not installed')"
echo "agentbox $(git rev-parse --short HEAD 2>/dev/null || echo '(no git)')$(git diff --quiet HEAD -- 2>/dev/null || echo ' with local changes')"
if mountpoint -q /sys/fs/cgroup/unified; then echo "cgroups: hybrid (v1 controllers, v2 at /sys/fs/cgroup/unified)"; fi

section "issue 2: agentbox run -- true vs runc (N=$N)"
"$ABB" launch -agentbox bin/agentbox -runtime runc -target 1.5 -n "$N" -work "$OUT" -rows "$ROWS" || failed+=(launch-runc)

if command -v crun >/dev/null; then
	section "issue 2: agentbox run -- true vs crun (N=$N)"
	"$ABB" launch -agentbox bin/agentbox -runtime crun -n "$N" -work "$OUT" -rows "$ROWS" || failed+=(launch-crun)
	section "issue 14: agentbox run --runtime crun -- true vs a bare runc run (N=$N; target <= 1.0)"
	"$ABB" launch -agentbox bin/agentbox -runtime crun -baseline-runtime runc -target 1.0 -label "crun vs bare runc" -n "$N" -work "$OUT" -rows "$ROWS" || failed+=(launch-crun-vs-runc)
	if mountpoint -q /sys/fs/cgroup/unified; then
		# crun refuses a hybrid layout; agentbox hides the v2 mount from each
		# crun call itself. Here both sides run in one private mount
		# namespace without it, so that the baseline can run too.
		section "issue 2: the same, both sides in a private mount namespace without /sys/fs/cgroup/unified"
		unshare --mount --propagation private sh -c 'umount /sys/fs/cgroup/unified && exec "$@"' sh \
			"$ABB" launch -agentbox bin/agentbox -runtime crun -label "crun, private mount ns" -n "$N" -work "$OUT" -rows "$ROWS" || failed+=(launch-crun-ns)
	fi
else
	section "issue 2: crun is not installed (apt-get install crun); no crun comparison"
fi

CTRD="${AGENTBOX_TEST_CONTAINERD:-/run/agentbox-containerd/containerd.sock}"
if command -v ctr >/dev/null && ctr --address "$CTRD" version >/dev/null 2>&1; then
	section "issue 14: agentbox run --engine containerd -- true vs a bare ctr run of the bundle (N=$N; target <= 1.2)"
	"$ABB" launch -agentbox bin/agentbox -runtime runc -address "$CTRD" -target 1.2 -label "containerd" -n "$N" -work "$OUT" -rows "$ROWS" || failed+=(launch-containerd)
else
	section "issue 14: no containerd answers on $CTRD (scripts/containerd-up.sh); no containerd comparison"
fi

section "issue 4: the probe suite"
gobench selftest ./selftest -run '^$' -bench Suite -count 5
"$ABB" selftest -agentbox bin/agentbox -work "$OUT" -n 10 -rows "$ROWS" || failed+=(selftest)

section "issue 3: audit"
gobench audit ./audit -run '^$' -bench . -count 5
# A real running container too, when the engine and the test image of
# `make setup` are there (no network: --network none; nothing is pulled).
IMAGE=agentbox-test/busybox:latest
CTR="agentbox-bench-audit"
if docker info >/dev/null 2>&1 && docker image inspect "$IMAGE" >/dev/null 2>&1; then
	docker rm -f "$CTR" >/dev/null 2>&1 || true
	docker run -d --rm --network none --name "$CTR" "$IMAGE" sleep 600 >/dev/null
	"$ABB" audit -agentbox bin/agentbox -container "$CTR" -work "$OUT" -rows "$ROWS" || failed+=(audit-container)
	docker rm -f "$CTR" >/dev/null 2>&1 || true
else
	echo "no Docker engine or no $IMAGE (make setup): the CLI audit of a real container is not measured"
fi

section "issue 5: the gateway"
if grep -qs '^func Benchmark' netpolicy/*_test.go netpolicy/*/*_test.go; then
	gobench netpolicy ./netpolicy/... -run '^$' -bench . -count 5 -timeout 5m
else
	echo "netpolicy has no benchmarks yet; this section runs them once it does"
fi

section "seccomp: compiling the profile"
gobench seccomp ./seccomp -run '^$' -bench Compile -count 5

section "issue 13: a syscall-heavy workload, seccomp listener vs plain filter"
if command -v git >/dev/null && command -v gcc >/dev/null; then
	"$ABB" syscalls -agentbox bin/agentbox -work "$OUT" -rounds "${BENCH_ROUNDS:-6}" -rows "$ROWS" || failed+=(syscalls)
else
	echo "git or gcc is missing (apt-get install git gcc): the listener's cost is not measured"
fi

section "summary (medians; ratio = agentbox / baseline)"
"$ABB" summary -rows "$ROWS" -gobench "$OUT/gobench"

if ((${#failed[@]})); then
	echo
	echo "bench.sh: these parts failed: ${failed[*]}" >&2
	exit 1
fi
