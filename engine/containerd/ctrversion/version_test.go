package ctrversion

import (
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
