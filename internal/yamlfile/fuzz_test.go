package yamlfile

import (
	"bytes"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"
)

// FuzzDecode: Decode never panics, every refusal is Errors naming the file,
// and what it accepts a strict yaml decoder accepts too, with the same
// result.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		"name: a\nlimits: {pids: 3}\nroutes:\n  a: {url: x}\nrules:\n  - code: c\n",
		"tags: [a, b]\npair: [1, 2]\nwait: 1s\nlevel: low\nany: {x: [1]}\n",
		"name: &a x\nplain: *a\n", "limits:\n  <<: {pids: 1}\n", "? [a]\n: 1\n", "a: 1\n---\nb: 2\n",
		`{"name": "a", "counts": [1, 2]}`, "- a\n", "~\n", "", "limits: [\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var got testDoc
		lines, err := Decode("t.yaml", data, &got)
		if lines == nil {
			t.Fatal("nil Lines")
		}
		if err != nil {
			var es Errors
			if !errors.As(err, &es) || len(es) == 0 || len(es) > MaxErrors+1 {
				t.Fatalf("error %v (%T) is not 1 to %d Errors", err, err, MaxErrors+1)
			}
			for _, e := range es {
				if e.File != "t.yaml" {
					t.Fatalf("%v does not name the file", e)
				}
			}
			return
		}
		var want testDoc
		dec := yaml.NewDecoder(bytes.NewReader(data))
		dec.KnownFields(true)
		if err := dec.Decode(&want); err != nil && len(bytes.TrimSpace(data)) > 0 && len(lines) > 0 {
			t.Fatalf("Decode accepted %q, a strict yaml decoder refuses it: %v", data, err)
		}
		if diff := cmp.Diff(want, got); diff != "" && len(lines) > 0 {
			t.Fatalf("Decode(%q) differs from yaml (-yaml +Decode):\n%s", data, diff)
		}
	})
}
