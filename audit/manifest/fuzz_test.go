package manifest

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	. "github.com/agentbox/agentbox/audit"
)

func FuzzCompose(f *testing.F) {
	for _, tc := range composeCases {
		if body, ok := tc.files["compose.yaml"]; ok {
			f.Add([]byte(body))
		}
	}
	f.Add([]byte("x: &a [*a]\nservices: {s: {image: x, <<: *a}}\n"))
	f.Add([]byte("services:\n  s:\n    image: x\n    extends: s\n"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(dir, "compose.yaml")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		cs, err := LoadCompose(context.Background(), []string{p}, ComposeOptions{})
		if err != nil {
			return
		}
		r := Audit(cs, Options{})
		if err := WriteText(discard{}, r, false); err != nil {
			t.Fatal(err)
		}
	})
}
