package selftest

import (
	"context"
	"testing"
)

// BenchmarkSuite runs the whole catalog in-process with the zero
// configuration (route lookups only, no canaries). Inside a sandbox most
// probes end at their first refusal; as root on the host they do more work
// (namespaces are created and freed), so this is an upper bound there.
func BenchmarkSuite(b *testing.B) {
	cfg := &InitConfig{Version: ProtocolVersion, RunID: "bench"}
	e := NewEnv(cfg)
	for b.Loop() {
		n := 0
		if err := Run(context.Background(), e, func(Result) error { n++; return nil }); err != nil {
			b.Fatal(err)
		}
		if n != len(Catalog()) {
			b.Fatalf("%d results, want %d", n, len(Catalog()))
		}
	}
}
