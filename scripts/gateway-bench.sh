#!/usr/bin/env bash
# gateway-bench.sh — measure the gateway beside a direct loopback connection
# and print its cost against the targets of issue 5:
#   added median latency per model request   < 300 µs
#   added p99 delay per streamed SSE event   < 1 ms
#   CONNECT bulk throughput / direct         >= 0.5
# Usage: scripts/gateway-bench.sh [--check] [BENCHTIME]   (default 2s)
# --check exits 1 when a target is missed. Only loopback is used.
set -euo pipefail
cd "$(dirname "$0")/.."
check=0
if [[ "${1:-}" == "--check" ]]; then check=1; shift; fi
benchtime="${1:-2s}"
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
go test ./netpolicy/ -run '^$' -bench '^BenchmarkGateway' -benchtime "$benchtime" -count 1 -timeout 20m | tee "$out"
echo
awk -v check="$check" '
function metric(name,   i) { for (i = 2; i < NF; i++) if ($(i+1) == name) return $i; return "" }
/^BenchmarkGatewayRequest\// { split($1, n, "[/-]"); req[n[2]] = metric("added-p50-µs"); reqd[n[2]] = metric("direct-p50-µs") }
/^BenchmarkGatewaySSE\//     { split($1, n, "[/-]"); sse[n[2]] = metric("added-p99-µs") }
/^BenchmarkGatewayConnect\// { split($1, n, "[/-]"); con[n[2]] = metric("ratio"); cond[n[2]] = metric("direct-MB/s"); cong[n[2]] = metric("gateway-MB/s") }
END {
  miss = 0
  printf "%-8s %-34s %12s %12s  %s\n", "path", "measure", "value", "target", "verdict"
  for (k in req) { v = (req[k] < 300) ? "ok" : "MISSED"; if (v != "ok") miss++
    printf "%-8s %-34s %9.1f µs %9s µs  %s (direct p50 %.1f µs)\n", k, "added p50 latency per request", req[k], "<300", v, reqd[k] }
  for (k in sse) { v = (sse[k] < 1000) ? "ok" : "MISSED"; if (v != "ok") miss++
    printf "%-8s %-34s %9.1f µs %9s µs  %s\n", k, "added p99 delay per SSE event", sse[k], "<1000", v }
  for (k in con) { v = (con[k] >= 0.5) ? "ok" : "MISSED"; if (v != "ok") miss++
    printf "%-8s %-34s %12.3f %12s  %s (%.0f of %.0f MB/s)\n", k, "CONNECT throughput / direct", con[k], ">=0.5", v, cong[k], cond[k] }
  print "\ntcp: agent -> gateway over TCP loopback; bridge: agent -> in-sandbox bridge -> unix socket -> gateway (the real path)"
  if (check && miss) exit 1
}' "$out"
