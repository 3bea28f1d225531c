package main

import (
	"bufio"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// goBench holds the results of `go test -bench` output: for each benchmark
// (its name without the -GOMAXPROCS suffix) and unit, one value per run
// (-count).
type goBench map[string]map[string][]float64

var procsSuffix = regexp.MustCompile(`-\d+$`)

// parseGoBench reads `go test -bench` output. A result line is the name,
// the iteration count, then value-unit pairs; every other line is ignored.
func parseGoBench(r io.Reader) (goBench, error) {
	out := goBench{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") || len(f)%2 != 0 {
			continue
		}
		if _, err := strconv.Atoi(f[1]); err != nil {
			continue
		}
		name := procsSuffix.ReplaceAllString(f[0], "")
		if out[name] == nil {
			out[name] = map[string][]float64{}
		}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				continue
			}
			out[name][f[i+1]] = append(out[name][f[i+1]], v)
		}
	}
	return out, sc.Err()
}

// median returns the median of bench's unit over all runs, and whether
// there was any.
func (g goBench) median(bench, unit string) (float64, bool) {
	v := slices.Clone(g[bench][unit])
	if len(v) == 0 {
		return 0, false
	}
	slices.Sort(v)
	if len(v)%2 == 0 {
		return (v[len(v)/2-1] + v[len(v)/2]) / 2, true
	}
	return v[len(v)/2], true
}

// names returns the benchmarks whose name starts with prefix, sorted.
func (g goBench) names(prefix string) []string {
	var out []string
	for n := range g {
		if strings.HasPrefix(n, prefix) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}
