package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseGoBench(t *testing.T) {
	in := `goos: linux
pkg: github.com/agentbox/agentbox/netpolicy
BenchmarkGatewayRequest/tcp-2         	    5551	    216778 ns/op	        56.76 added-p50-µs	      1544 added-p99-µs
BenchmarkGatewayConnect/tcp-2         	     132	   8846905 ns/op	 948.20 MB/s	         0.5707 ratio
BenchmarkGatewayConnect/tcp-2         	     140	   8000000 ns/op	 990.00 MB/s	         0.6 ratio
BenchmarkGatewayConnect/tcp-2         	     150	   9000000 ns/op	 900.00 MB/s	         0.4 ratio
BenchmarkSuite-16   	      52	  21490262 ns/op
BenchmarkBroken-2 many 1 ns/op
--- FAIL: BenchmarkX
PASS
ok  	github.com/agentbox/agentbox/netpolicy	607.139s
`
	g, err := parseGoBench(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := goBench{
		"BenchmarkGatewayRequest/tcp": {"ns/op": {216778}, "added-p50-µs": {56.76}, "added-p99-µs": {1544}},
		"BenchmarkGatewayConnect/tcp": {"ns/op": {8846905, 8000000, 9000000}, "MB/s": {948.2, 990, 900}, "ratio": {0.5707, 0.6, 0.4}},
		"BenchmarkSuite":              {"ns/op": {21490262}},
	}
	if d := cmp.Diff(want, g); d != "" {
		t.Fatalf("parseGoBench (-want +got):\n%s", d)
	}
	for _, c := range []struct {
		bench, unit string
		want        float64
		ok          bool
	}{
		{"BenchmarkGatewayConnect/tcp", "ratio", 0.5707, true},
		{"BenchmarkGatewayConnect/tcp", "MB/s", 948.2, true},
		{"BenchmarkSuite", "ns/op", 21490262, true},
		{"BenchmarkSuite", "MB/s", 0, false},
		{"BenchmarkMissing", "ns/op", 0, false},
	} {
		got, ok := g.median(c.bench, c.unit)
		if got != c.want || ok != c.ok {
			t.Errorf("median(%s, %s) = %v, %v; want %v, %v", c.bench, c.unit, got, ok, c.want, c.ok)
		}
	}
	if d := cmp.Diff([]string{"BenchmarkGatewayConnect/tcp", "BenchmarkGatewayRequest/tcp"}, g.names("BenchmarkGateway")); d != "" {
		t.Errorf("names (-want +got):\n%s", d)
	}
}

func TestGoBenchMedianEven(t *testing.T) {
	g := goBench{"B": {"ns/op": {4, 1, 3, 2}}}
	if got, _ := g.median("B", "ns/op"); got != 2.5 {
		t.Errorf("median = %v, want 2.5", got)
	}
}
