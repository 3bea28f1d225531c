package manifest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/agentbox/agentbox/audit"
)

// compose50 writes a 50-service compose file mixing every construct the
// loader handles: anchors and merge keys, short and long volumes, env lists
// and maps, networks internal and not.
func compose50(tb testing.TB) string {
	tb.Helper()
	var b strings.Builder
	b.WriteString("x-base: &base\n  image: agentbox-test/busybox\n  cap_drop: [ALL]\n  security_opt: [no-new-privileges:true]\n  read_only: true\n")
	b.WriteString("services:\n")
	for i := range 50 {
		fmt.Fprintf(&b, "  svc%02d:\n    <<: *base\n    user: \"%d:%d\"\n", i, 1000+i, 1000+i)
		fmt.Fprintf(&b, "    volumes:\n      - ./data%02d:/data\n      - type: bind\n        source: /etc/localtime\n        target: /etc/localtime\n        read_only: true\n", i)
		fmt.Fprintf(&b, "    environment:\n      - LEVEL=%d\n      - SERVICE_TOKEN=fake%d\n", i, i)
		fmt.Fprintf(&b, "    command: [\"codex\", \"--yolo\", \"task %d\"]\n    networks: [inner, outer]\n    mem_limit: 256m\n    pids_limit: 64\n", i)
	}
	b.WriteString("networks:\n  inner:\n    internal: true\n  outer: {}\n")
	p := filepath.Join(tb.TempDir(), "compose.yaml")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		tb.Fatal(err)
	}
	return p
}

// BenchmarkCompose50 is the time to audit a 50-service compose file, from
// reading the file to the report (target: under 200 ms).
func BenchmarkCompose50(b *testing.B) {
	p := compose50(b)
	ctx := context.Background()
	for b.Loop() {
		cs, err := LoadCompose(ctx, []string{p}, ComposeOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if r := Audit(cs, Options{}); len(r.Containers) != 50 {
			b.Fatalf("audited %d services", len(r.Containers))
		}
	}
}

func TestCompose50(t *testing.T) {
	cs, err := LoadCompose(context.Background(), []string{compose50(t)}, ComposeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := Audit(cs, Options{})
	if len(r.Containers) != 50 {
		t.Fatalf("audited %d services", len(r.Containers))
	}
	// Each service's one read-write bind (./dataNN) is its presumed workspace.
	want := []string{"auto-approve-permission-mode high", "network-policy-not-applied high", "secret-in-environment high", "user-namespace-not-used info unknown"}
	for _, c := range r.Containers {
		if got := codesOf(c.Findings); strings.Join(got, ";") != strings.Join(want, ";") {
			t.Fatalf("%s: %v", c.Name, got)
		}
	}
}
