package audit

import (
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

type discard struct{}

func (discard) Write(b []byte) (int, error) { return len(b), nil }
