package ledger

import (
	"regexp"
	"strings"
	"testing"
)

// IsRunID is the regexp it replaced, without the regexp's start-up cost.
func TestIsRunIDIsThePattern(t *testing.T) {
	re := regexp.MustCompile(RunIDPattern)
	cases := []string{
		"", "a", "A", "0", ".", "_", "-", "a.", "a_b-c.d", ".a", "-a", "_a",
		"20251129T074412.123Z-4f2a9c1b", "a b", "a/b", "a\n", "a\x00", "é", "aé", "a..",
		strings.Repeat("a", 127), strings.Repeat("a", 128), strings.Repeat("a", 129),
		"a" + strings.Repeat("-", 127), "a" + strings.Repeat("-", 128), "../x", "a:b",
	}
	for c := byte(0); c < 255; c++ {
		cases = append(cases, string([]byte{c}), "a"+string([]byte{c}))
	}
	for _, s := range cases {
		if got, want := IsRunID(s), re.MatchString(s); got != want {
			t.Errorf("IsRunID(%q) = %v, the pattern says %v", s, got, want)
		}
	}
}
