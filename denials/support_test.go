package denials

import (
	"strings"
	"testing"
)

func TestRuntimeSupport(t *testing.T) {
	tests := []struct {
		name, version string
		want          string // "" supported, else a fragment of the reason
	}{
		{"runc", "1.1.5", ""},
		{"runc", "1.1.5+ds1", ""},
		{"runc", "1.2.0-rc.1", ""},
		{"runc", "1.0.3", "older than 1.1"},
		{"runc", "", "no version"},
		{"crun", "1.8.1", ""},
		{"crun", "0.18", "older than 0.19"},
		{"youki", "0.3.0", "does not know"},
	}
	for _, tt := range tests {
		err := RuntimeSupport(tt.name, tt.version)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s %s: %v, want supported", tt.name, tt.version, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s %s: %v, want %q", tt.name, tt.version, err, tt.want)
		}
	}
}
