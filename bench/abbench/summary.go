package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
)

// goSection is one `go test -bench` output file that scripts/bench.sh
// writes into the gobench directory, and the summary rows made from it.
type goSection struct {
	file string
	what string
	rows func(goBench) []row
}

var goSections = []goSection{
	{"selftest.txt", "probe suite on the host (go test ./selftest -bench Suite)", selftestRows},
	{"audit.txt", "audit benchmarks (go test ./audit -bench .)", auditRows},
	{"netpolicy.txt", "gateway benchmarks (go test ./netpolicy/... -bench .)", gatewayRows},
	{"seccomp.txt", "seccomp compile (go test ./seccomp -bench Compile)", seccompRows},
}

func runSummary(args []string) error {
	fs := flag.NewFlagSet("summary", flag.ContinueOnError)
	rowsFile := fs.String("rows", "", "rows file written by launch and selftest")
	dir := fs.String("gobench", "", "directory holding the go test -bench outputs")
	if err := fs.Parse(args); err != nil {
		return err
	}
	rows, err := readRows(*rowsFile)
	if err != nil {
		return err
	}
	for _, s := range goSections {
		r, err := s.load(*dir)
		if err != nil {
			return err
		}
		rows = append(rows, r...)
	}
	return printTable(os.Stdout, rows)
}

// load parses the section's output; a file that is absent means the
// benchmarks did not run, which is a row too, never silence.
func (s goSection) load(dir string) ([]row, error) {
	f, err := os.Open(filepath.Join(dir, s.file))
	if errors.Is(err, fs.ErrNotExist) {
		return []row{{Metric: s.what, Value: "not run (see its section above)", Met: "-"}}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	g, err := parseGoBench(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.file, err)
	}
	return s.rows(g), nil
}

func printTable(w io.Writer, rows []row) error {
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "METRIC\tAGENTBOX\tBASELINE\tRATIO/VALUE\tTARGET\tMET")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.Metric, dash(r.Agentbox), dash(r.Baseline), r.Value, dash(r.Target), r.Met)
	}
	return tw.Flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// missing is the row of a metric that the output did not contain.
func missing(metric string) row {
	return row{Metric: metric, Value: "missing from the output", Met: "-"}
}

func nsMS(ns float64) string { return fmt.Sprintf("%.2f ms", ns/1e6) }

func selftestRows(g goBench) []row {
	const metric = "probe suite on the host, in-process"
	ns, ok := g.median("BenchmarkSuite", "ns/op")
	if !ok {
		return []row{missing(metric)}
	}
	return []row{{Metric: metric, Agentbox: nsMS(ns), Value: nsMS(ns), Target: "< 100 ms", Met: met(ns < 100e6)}}
}

func auditRows(g goBench) []row {
	var rows []row
	if ns, ok := g.median("BenchmarkCompose50", "ns/op"); ok {
		rows = append(rows, row{Metric: "audit a 50-service compose file", Agentbox: nsMS(ns), Value: nsMS(ns), Target: "< 200 ms", Met: met(ns < 200e6)})
	} else {
		rows = append(rows, missing("audit a 50-service compose file"))
	}
	if ns, ok := g.median("BenchmarkEngineContainer", "ns/op"); ok {
		rows = append(rows, row{Metric: "audit a running container (local fake engine)", Agentbox: nsMS(ns), Value: nsMS(ns), Met: "-"})
	} else {
		rows = append(rows, missing("audit a running container"))
	}
	return rows
}

// gatewayRows reads the netpolicy benchmarks, one sub-benchmark per path
// from the agent to the gateway (tcp, bridge).
func gatewayRows(g goBench) []row {
	var rows []row
	for _, path := range []string{"tcp", "bridge"} {
		rows = append(rows,
			gatewayRow(g, "BenchmarkGatewayRequest/"+path, "gateway added latency per request, p50 ("+path+")",
				"gateway-p50-µs", "direct-p50-µs", "added-p50-µs", "< 300 µs", func(v float64) bool { return v < 300 }),
			gatewayRow(g, "BenchmarkGatewaySSE/"+path, "gateway added delay per SSE event, p99 ("+path+")",
				"gateway-p99-µs", "", "added-p99-µs", "< 1000 µs", func(v float64) bool { return v < 1000 }),
			gatewayRow(g, "BenchmarkGatewayConnect/"+path, "CONNECT throughput vs direct ("+path+")",
				"gateway-MB/s", "direct-MB/s", "ratio", "≥ 0.5", func(v float64) bool { return v >= 0.5 }),
		)
	}
	return rows
}

func gatewayRow(g goBench, bench, metric, ab, base, value, target string, ok func(float64) bool) row {
	v, found := g.median(bench, value)
	if !found {
		return missing(metric)
	}
	unit := func(u string) string {
		if strings.HasSuffix(u, "-µs") {
			return " µs"
		}
		if strings.HasSuffix(u, "MB/s") {
			return " MB/s"
		}
		return ""
	}
	f := func(u string) string {
		x, found := g.median(bench, u)
		if u == "" || !found {
			return ""
		}
		return fmt.Sprintf("%.0f%s", x, unit(u))
	}
	val := fmt.Sprintf("%.0f%s", v, unit(value))
	if value == "ratio" {
		val = fmt.Sprintf("%.2f", v)
	}
	return row{Metric: metric, Agentbox: f(ab), Baseline: f(base), Value: val, Target: target, Met: met(ok(v))}
}

// seccompRows: the compile time of each profile, and what the extra
// 32-bit ABIs of a Docker-style profile cost against the native one.
func seccompRows(g goBench) []row {
	var rows []row
	var native, three float64
	for _, n := range g.names("BenchmarkCompile/") {
		ns, _ := g.median(n, "ns/op")
		arch := strings.TrimPrefix(n, "BenchmarkCompile/")
		rows = append(rows, row{Metric: "seccomp compile " + arch, Agentbox: nsMS(ns), Value: nsMS(ns), Met: "-"})
		switch arch {
		case "SCMP_ARCH_X86_64":
			native = ns
		case "SCMP_ARCH_X86_64+X86+X32":
			three = ns
		}
	}
	if len(rows) == 0 {
		return []row{missing("seccomp compile")}
	}
	if native > 0 && three > 0 {
		rows = append(rows, row{Metric: "seccomp compile, native vs +x86+x32", Agentbox: nsMS(native), Baseline: nsMS(three), Value: fmt.Sprintf("%.2f", native/three), Met: "-"})
	}
	return rows
}
