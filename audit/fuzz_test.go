package audit

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

func FuzzParseInspect(f *testing.F) {
	for _, name := range []string{"faults.json", "hardened.json", "weak.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", "inspect", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"Config":{},"HostConfig":{"SecurityOpt":["seccomp={","label:"]}}`))
	f.Add([]byte(`[{"Config":{"Entrypoint":"a b"},"HostConfig":{"PidsLimit":-1,"MaskedPaths":[]}}]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		cs, err := ParseInspect(b, "inspect")
		if err != nil {
			return
		}
		r := Audit(cs, Options{})
		if err := WriteText(discard{}, r, true); err != nil {
			t.Fatal(err)
		}
		if err := WriteSARIF(discard{}, r, ""); err != nil {
			t.Fatal(err)
		}
	})
}

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

type discard struct{}

func (discard) Write(b []byte) (int, error) { return len(b), nil }
