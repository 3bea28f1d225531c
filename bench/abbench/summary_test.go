package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func parse(t *testing.T, s string) goBench {
	t.Helper()
	g, err := parseGoBench(strings.NewReader(s))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestGoSectionRows(t *testing.T) {
	for _, c := range []struct {
		name string
		rows func(goBench) []row
		in   string
		want []row
	}{
		{
			"selftest met", selftestRows, "BenchmarkSuite-2 52 21490262 ns/op\n",
			[]row{{Metric: "probe suite on the host, in-process", Agentbox: "21.49 ms", Value: "21.49 ms", Target: "< 100 ms", Met: "yes"}},
		},
		{
			"selftest missed", selftestRows, "BenchmarkSuite-2 1 150000000 ns/op\n",
			[]row{{Metric: "probe suite on the host, in-process", Agentbox: "150.00 ms", Value: "150.00 ms", Target: "< 100 ms", Met: "no"}},
		},
		{"selftest absent", selftestRows, "PASS\n", []row{missing("probe suite on the host, in-process")}},
		{"audit", auditRows, "BenchmarkCompose50-2 19 67409673 ns/op\nBenchmarkEngineContainer-2 1719 677250 ns/op\n", []row{
			{Metric: "audit a 50-service compose file", Agentbox: "67.41 ms", Value: "67.41 ms", Target: "< 200 ms", Met: "yes"},
			{Metric: "audit a running container (local fake engine)", Agentbox: "0.68 ms", Value: "0.68 ms", Met: "-"},
		}},
		{"seccomp", seccompRows, "BenchmarkCompile/SCMP_ARCH_X86_64+X86+X32-2 91 13748332 ns/op\nBenchmarkCompile/SCMP_ARCH_X86_64-2 691 1572532 ns/op\n", []row{
			{Metric: "seccomp compile SCMP_ARCH_X86_64", Agentbox: "1.57 ms", Value: "1.57 ms", Met: "-"},
			{Metric: "seccomp compile SCMP_ARCH_X86_64+X86+X32", Agentbox: "13.75 ms", Value: "13.75 ms", Met: "-"},
			{Metric: "seccomp compile, native vs +x86+x32", Agentbox: "1.57 ms", Baseline: "13.75 ms", Value: "0.11", Met: "-"},
		}},
		{"seccomp absent", seccompRows, "", []row{missing("seccomp compile")}},
	} {
		if d := cmp.Diff(c.want, c.rows(parse(t, c.in))); d != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, d)
		}
	}
}

func TestGatewayRows(t *testing.T) {
	in := `BenchmarkGatewayRequest/tcp-2 5551 216778 ns/op 56.76 added-p50-µs 1544 added-p99-µs 31.88 direct-p50-µs 88.64 gateway-p50-µs
BenchmarkGatewaySSE/tcp-2 27247 47417 ns/op 28.75 added-p99-µs 10.87 direct-p50-µs 22.51 gateway-p50-µs 65.02 gateway-p99-µs
BenchmarkGatewayConnect/tcp-2 132 8846905 ns/op 948.20 MB/s 1305 direct-MB/s 744.8 gateway-MB/s 0.4707 ratio
`
	got := gatewayRows(parse(t, in))
	want := []row{
		{Metric: "gateway added latency per request, p50 (tcp)", Agentbox: "89 µs", Baseline: "32 µs", Value: "57 µs", Target: "< 300 µs", Met: "yes"},
		{Metric: "gateway added delay per SSE event, p99 (tcp)", Agentbox: "65 µs", Value: "29 µs", Target: "< 1000 µs", Met: "yes"},
		{Metric: "CONNECT throughput vs direct (tcp)", Agentbox: "745 MB/s", Baseline: "1305 MB/s", Value: "0.47", Target: "≥ 0.5", Met: "no"},
		missing("gateway added latency per request, p50 (bridge)"),
		missing("gateway added delay per SSE event, p99 (bridge)"),
		missing("CONNECT throughput vs direct (bridge)"),
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("gatewayRows (-want +got):\n%s", d)
	}
}

// TestSummaryNeverHidesASection: a benchmark file that is absent is a row
// saying so, and the rows file's rows come first, in order.
func TestSummaryNeverHidesASection(t *testing.T) {
	dir := t.TempDir()
	rowsFile := filepath.Join(dir, "rows.jsonl")
	first := row{Metric: "run -- true, with self-test (runc)", Agentbox: "85.30 ms", Baseline: "37.68 ms", Value: "2.26", Target: "≤ 1.25", Met: "no"}
	if err := appendRows(rowsFile, first); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "audit.txt"), []byte("BenchmarkCompose50-2 19 67409673 ns/op\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rows, err := readRows(rowsFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range goSections {
		r, err := s.load(dir)
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, r...)
	}
	var b bytes.Buffer
	if err := printTable(&b, rows); err != nil {
		t.Fatal(err)
	}
	// Compare lines with their column padding squeezed to one space.
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		lines = append(lines, strings.Join(strings.Fields(l), " "))
	}
	want := []string{
		"METRIC AGENTBOX BASELINE RATIO/VALUE TARGET MET",
		"run -- true, with self-test (runc) 85.30 ms 37.68 ms 2.26 ≤ 1.25 no",
		"probe suite on the host (go test ./selftest -bench Suite) - - not run (see its section above) - -",
		"audit a 50-service compose file 67.41 ms - 67.41 ms < 200 ms yes",
		"audit a running container - - missing from the output - -",
		"gateway benchmarks (go test ./netpolicy/... -bench .) - - not run (see its section above) - -",
		"seccomp compile (go test ./seccomp -bench Compile) - - not run (see its section above) - -",
	}
	if d := cmp.Diff(want, lines); d != "" {
		t.Errorf("summary (-want +got):\n%s", d)
	}
}
