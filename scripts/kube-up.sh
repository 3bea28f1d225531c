#!/usr/bin/env bash
# kube-up.sh: build and start a real Kubernetes API server for the kube
# integration test, idempotently, on loopback only. If it already answers,
# it does nothing.
#
# What runs: etcd (go.etcd.io/etcd/server/v3) on 127.0.0.1 and
# kube-apiserver (k8s.io/kubernetes/cmd/kube-apiserver) bound to 127.0.0.1
# with a self-signed serving certificate it makes itself, a static bearer
# token for the test (a member of system:masters), RBAC authorization,
# privileged pods allowed at the API level (as kubeadm sets it: Pod Security
# is what refuses them in the restricted namespace) and the default
# admission plugins, PodSecurity among them. No controller, scheduler or
# kubelet: pods are admitted and stored, never run.
#
# Both binaries are built from tools/kube (its own Go module, so agentbox
# never links Kubernetes) at the versions its go.mod names, and cached
# outside the clone keyed by those versions: the first build takes long on
# a small machine (see docs/kube.md), later runs reuse it.
#
# Environment:
#   AGENTBOX_KUBE_CACHE   binary cache (default /var/cache/agentbox-test/kube)
#   AGENTBOX_KUBE_STATE   state, certificates, logs (default /run/agentbox-kube)
#   KUBE_UP_TIMEOUT       seconds to wait for readiness (default 120)
#   KUBE_UP_BUILD_ONLY=1  build (or find) the binaries and stop
# The test reads $AGENTBOX_KUBE_STATE/env (AGENTBOX_TEST_KUBE overrides
# the state directory there): the server URL, the token file, the CA, and
# the directory of the CustomResourceDefinitions tools/kube/crds.txt pins
# (agent-sandbox, Security Profiles Operator), which the test applies.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
tools=$here/tools/kube
state=${AGENTBOX_KUBE_STATE:-/run/agentbox-kube}
timeout=${KUBE_UP_TIMEOUT:-120}
etcd_client=127.0.0.1:23790
etcd_peer=127.0.0.1:23800
port=26443

modver() { awk -v m="$1" '$1 == m && $2 ~ /^v/ {print $2; exit}' "$tools/go.mod"; }
kver=$(modver k8s.io/kubernetes)
ever=$(modver go.etcd.io/etcd/server/v3)
if [ -z "$kver" ] || [ -z "$ever" ]; then
	echo "kube-up: cannot read the k8s.io/kubernetes and etcd versions from $tools/go.mod" >&2
	exit 1
fi
bin=${AGENTBOX_KUBE_CACHE:-/var/cache/agentbox-test/kube}/kubernetes-$kver-etcd-$ever
apiserver=$bin/kube-apiserver
etcd=$bin/etcd

build() {
	if [ -x "$apiserver" ] && [ -x "$etcd" ]; then
		return
	fi
	echo "kube-up: building kube-apiserver $kver and etcd $ever into $bin (the first build takes long)"
	mkdir -p "$bin"
	tmp=$(mktemp -d "$bin.build.XXXXXX")
	(
		cd "$tools"
		export CGO_ENABLED=0
		go build -trimpath -o "$tmp/etcd" ./etcd
		go build -trimpath -o "$tmp/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver
	)
	mv "$tmp/etcd" "$etcd"
	mv "$tmp/kube-apiserver" "$apiserver"
	rmdir "$tmp"
}

# crds fetches the CustomResourceDefinitions tools/kube/crds.txt pins
# (agent-sandbox, Security Profiles Operator) from their Go modules through
# the module proxy (the go command checks each module against the checksum
# database), checks each file's sha256 and keeps them in the cache, keyed by
# the list's own hash.
crds_list=$tools/crds.txt
crds=${AGENTBOX_KUBE_CACHE:-/var/cache/agentbox-test/kube}/crds-$(sha256sum "$crds_list" | cut -c1-12)
fetch_crds() {
	if [ -f "$crds/.complete" ]; then
		return
	fi
	mkdir -p "$crds"
	grep -v '^#' "$crds_list" | while read -r mod file sum; do
		[ -n "$mod" ] || continue
		dir=$(cd "$tools" && GOFLAGS=-mod=mod go mod download -json "$mod" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
		if [ -z "$dir" ] || [ ! -f "$dir/$file" ]; then
			echo "kube-up: $mod has no $file" >&2
			exit 1
		fi
		if [ "$(sha256sum "$dir/$file" | cut -d' ' -f1)" != "$sum" ]; then
			echo "kube-up: $mod $file does not have the sha256 $crds_list pins" >&2
			exit 1
		fi
		cp "$dir/$file" "$crds/$(basename "$file")"
	done
	touch "$crds/.complete"
}

build
fetch_crds
if [ "${KUBE_UP_BUILD_ONLY:-}" = 1 ]; then
	echo "kube-up: binaries in $bin, CRDs in $crds"
	exit 0
fi

ready() {
	[ -f "$state/token" ] && [ -f "$state/certs/apiserver.crt" ] &&
		curl -sf --cacert "$state/certs/apiserver.crt" -H "Authorization: Bearer $(cat "$state/token")" \
			"https://127.0.0.1:$port/readyz" >/dev/null 2>&1
}

if ready && [ -f "$state/env" ]; then
	# A server an earlier version of this script started: name the CRDs.
	if ! grep -qx "AGENTBOX_KUBE_CRDS=$crds" "$state/env"; then
		grep -v '^AGENTBOX_KUBE_CRDS=' "$state/env" >"$state/env.new" || true
		echo "AGENTBOX_KUBE_CRDS=$crds" >>"$state/env.new"
		mv -f "$state/env.new" "$state/env"
	fi
	echo "kube-up: kube-apiserver already answers on https://127.0.0.1:$port"
	exit 0
fi
if [ "$(id -u)" != 0 ]; then
	echo "kube-up: the API server is not running and starting it needs root (run: sudo $0)" >&2
	exit 1
fi
missing=()
for b in curl openssl; do
	command -v "$b" >/dev/null || missing+=("$b")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "kube-up: installing ${missing[*]}"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# A previous run's processes, found by their pid files only.
for p in apiserver etcd; do
	if [ -f "$state/$p.pid" ]; then
		kill "$(cat "$state/$p.pid")" 2>/dev/null || true
		rm -f "$state/$p.pid"
	fi
done
sleep 1
rm -rf "$state"
mkdir -p "$state/certs" "$state/etcd"
chmod 0700 "$state"

# The service-account signing key (the API server requires one) and the
# test's bearer token; the serving certificate is the API server's own
# self-signed one, written into certs/.
openssl genrsa -out "$state/sa.key" 2048 2>/dev/null
openssl rsa -in "$state/sa.key" -pubout -out "$state/sa.pub" 2>/dev/null
token=$(openssl rand -hex 24)
printf '%s' "$token" >"$state/token"
printf '%s,agentbox-test,agentbox-test,"system:masters"\n' "$token" >"$state/tokens.csv"
chmod 0600 "$state/token" "$state/tokens.csv" "$state/sa.key"

"$etcd" --name agentbox-test --data-dir "$state/etcd" \
	--listen-client-urls "http://$etcd_client" --advertise-client-urls "http://$etcd_client" \
	--listen-peer-urls "http://$etcd_peer" --initial-advertise-peer-urls "http://$etcd_peer" \
	--initial-cluster "agentbox-test=http://$etcd_peer" \
	>"$state/etcd.log" 2>&1 &
echo $! >"$state/etcd.pid"

for _ in $(seq 1 30); do
	curl -sf "http://$etcd_client/health" >/dev/null 2>&1 && break
	sleep 1
done

"$apiserver" --etcd-servers "http://$etcd_client" \
	--bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$port" \
	--cert-dir "$state/certs" --token-auth-file "$state/tokens.csv" \
	--authorization-mode RBAC --enable-admission-plugins PodSecurity \
	--service-cluster-ip-range 10.96.0.0/12 \
	--service-account-issuer https://kubernetes.default.svc \
	--service-account-key-file "$state/sa.pub" --service-account-signing-key-file "$state/sa.key" \
	--allow-privileged=true --endpoint-reconciler-type none --anonymous-auth=false --profiling=false \
	>"$state/apiserver.log" 2>&1 &
echo $! >"$state/apiserver.pid"

for _ in $(seq 1 "$timeout"); do
	if ready; then
		cat >"$state/env" <<ENV
AGENTBOX_KUBE_SERVER=https://127.0.0.1:$port
AGENTBOX_KUBE_TOKEN_FILE=$state/token
AGENTBOX_KUBE_CA_FILE=$state/certs/apiserver.crt
AGENTBOX_KUBE_VERSION=$kver
AGENTBOX_KUBE_CRDS=$crds
ENV
		echo "kube-up: kube-apiserver $kver (etcd $ever) ready on https://127.0.0.1:$port"
		exit 0
	fi
	if ! kill -0 "$(cat "$state/apiserver.pid")" 2>/dev/null; then
		echo "kube-up: kube-apiserver exited; its log:" >&2
		tail -30 "$state/apiserver.log" >&2
		exit 1
	fi
	sleep 1
done
echo "kube-up: kube-apiserver not ready after ${timeout}s; its log: $state/apiserver.log" >&2
tail -30 "$state/apiserver.log" >&2
exit 1
