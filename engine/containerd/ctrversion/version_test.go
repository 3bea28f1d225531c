package ctrversion

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestParseVersion(t *testing.T) {
	tests := []struct {
		in   string
		want Version
		bad  bool
	}{
		{in: "1.6.20~ds1", want: Version{1, 6, 20}},
		{in: "v1.7.24", want: Version{1, 7, 24}},
		{in: "2.0.0-rc.1", want: Version{2, 0, 0}},
		{in: "1.7.2+unknown", want: Version{1, 7, 2}},
		{in: "1.6", want: Version{1, 6, 0}},
		{in: " v2.1.3\n", want: Version{2, 1, 3}},
		{in: "", bad: true},
		{in: "1", bad: true},
		{in: "x.6.1", bad: true},
		{in: "1.x.1", bad: true},
		{in: "1.6x.1", bad: true},
		{in: "1.6.x", bad: true},
	}
	for _, tt := range tests {
		got, err := ParseVersion(tt.in)
		if (err != nil) != tt.bad {
			t.Errorf("ParseVersion(%q) error = %v, want error %v", tt.in, err, tt.bad)
			continue
		}
		if !tt.bad && got != tt.want {
			t.Errorf("ParseVersion(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestGate(t *testing.T) {
	tests := []struct {
		version string
		refuse  string // a fragment of the refusal, "" to accept
	}{
		{"1.6.20~ds1", ""},
		{"1.6.0", ""},
		{"1.7.24", ""},
		{"2.0.4", ""},
		{"v2.4.2", ""},
		{"1.5.18", "older than 1.6.0"},
		{"1.4.0", "older than 1.6.0"},
		{"0.9", "older than 1.6.0"},
		{"dev", "cannot tell"},
	}
	for _, tt := range tests {
		err := Gate(tt.version)
		switch {
		case tt.refuse == "" && err != nil:
			t.Errorf("Gate(%q) = %v, want accepted", tt.version, err)
		case tt.refuse != "" && (err == nil || !strings.Contains(err.Error(), tt.refuse)):
			t.Errorf("Gate(%q) = %v, want a refusal containing %q", tt.version, err, tt.refuse)
		}
	}
}

func TestUntested(t *testing.T) {
	for _, v := range []string{"1.6.20~ds1", "1.6.0", "v1.7.35", "1.7.2+unknown", "2.4.2", "v2.4.0-rc.1"} {
		if n := Untested(v); n != "" {
			t.Errorf("Untested(%q) = %q, want a tested line", v, n)
		}
	}
	for _, v := range []string{"2.0.7", "2.3.4", "3.0.0"} {
		if n := Untested(v); !strings.Contains(n, "not a release line") || !strings.Contains(n, "1.7.35, 2.4.2") {
			t.Errorf("Untested(%q) = %q, want a note naming the tested lines", v, n)
		}
	}
	for _, v := range []string{"1.5.18", "dev"} {
		if n := Untested(v); n != "" {
			t.Errorf("Untested(%q) = %q, want nothing (the Gate refuses it)", v, n)
		}
	}
}

// Tested names the releases the tools/containerd modules pin, so that
// moving a pin without the list (or the list without the pin) fails.
func TestTestedMatchesTheBuiltDaemons(t *testing.T) {
	mods, err := filepath.Glob("../../../tools/containerd/*/go.mod")
	if err != nil || len(mods) == 0 {
		t.Fatalf("no tools/containerd/*/go.mod: %v", err)
	}
	pinned := map[Version]bool{}
	for _, m := range mods {
		b, err := os.ReadFile(m)
		if err != nil {
			t.Fatal(err)
		}
		var pin string
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "require "))
			if len(f) >= 2 && (f[0] == "github.com/containerd/containerd" || f[0] == "github.com/containerd/containerd/v2") {
				pin = f[1]
			}
		}
		v, err := ParseVersion(pin)
		if err != nil {
			t.Fatalf("%s: containerd pin %q: %v", m, pin, err)
		}
		pinned[v] = true
		if !slices.Contains(Tested, v) {
			t.Errorf("%s pins containerd %s, which Tested does not list", m, v)
		}
	}
	for _, v := range Tested {
		if !pinned[v] && v != (Version{1, 6, 20}) { // Debian 12's package, which no module here builds
			t.Errorf("Tested lists %s, which no tools/containerd module pins", v)
		}
	}
}
