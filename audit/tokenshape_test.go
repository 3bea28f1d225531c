package audit

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// The regexps the hand-written shapes replace (tokenShapes), in the same
// order.
var tokenShapeRegexps = []string{
	`^(gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})$`,
	`^sk-ant-[A-Za-z0-9_-]{20,}$`,
	`^sk-(proj-)?[A-Za-z0-9_-]{20,}$`,
	`^(AKIA|ASIA)[A-Z0-9]{16}$`,
	`^hf_[A-Za-z0-9]{30,}$`,
	`^glpat-[A-Za-z0-9_-]{20,}$`,
	`^xox[abposr]-[A-Za-z0-9-]{10,}$`,
	`^AIza[0-9A-Za-z_-]{35}$`,
	`-----BEGIN [A-Z ]*PRIVATE KEY-----`,
	`^[a-zA-Z][a-zA-Z0-9+.-]*://[^/@:\s]*:[^/@\s]+@`,
}

// Each shape, and the gateway token and path checks, answers as the regexp
// it replaces, on values made of each
// shape's prefixes (and near misses of them) followed by runs of every
// length around the bounds, drawn from the class, from the class with one
// stranger (a space, '_', '-', '.', a non-ASCII letter, an invalid byte),
// and from everything.
func TestTokenShapes(t *testing.T) {
	if len(tokenShapes) != len(tokenShapeRegexps) {
		t.Fatalf("%d shapes, %d regexps", len(tokenShapes), len(tokenShapeRegexps))
	}
	prefixes := []string{
		"", "gh", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "ghx_", "github_pat_", "github_pat", "sk-", "sk-ant-", "sk-proj-", "sk_",
		"AKIA", "ASIA", "AKIB", "akia", "hf_", "hf-", "glpat-", "glpat_", "xoxa-", "xoxb-", "xoxp-", "xoxo-", "xoxs-", "xoxr-", "xoxc-",
		"AIza", "AIzb", "aiza", " ghp_", "ghp_ghp_",
	}
	strangers := []string{" ", "_", "-", ".", "é", "\xff", "\n", "/", ":"}
	r := rand.New(rand.NewPCG(1, 2))
	runOf := func(class string, n int) string {
		var b strings.Builder
		for range n {
			b.WriteByte(class[r.IntN(len(class))])
		}
		return b.String()
	}
	var values []string
	for _, p := range prefixes {
		for _, n := range []int{0, 1, 9, 10, 11, 15, 16, 17, 19, 20, 21, 29, 30, 31, 34, 35, 36, 40, 60} {
			for _, class := range []string{alnum, alnum + "_", alnum + "_-", alnum + "-", upperDigits, "abc", "ABC123"} {
				v := runOf(class, n)
				values = append(values, p+v)
				if n > 0 {
					at := r.IntN(n)
					for _, s := range strangers {
						values = append(values, p+v[:at]+s+v[at+1:])
					}
				}
			}
		}
	}
	values = append(values, "-----BEGIN RSA PRIVATE KEY-----", "x -----BEGIN PRIVATE KEY----- y", "-----BEGIN rsa PRIVATE KEY-----",
		"https://user:pw@host", "https://user@host", "https://:pw@host", "git+ssh://u:p@h/x", "1http://u:p@h", "http://u:p/x@h", "http://u: p@h")
	checks := []struct {
		what, expr string
		match      func(string) bool
	}{
		{"the gateway token", `^` + GatewayTokenPrefix + `[A-Za-z0-9_-]{20,}$`, gatewayToken},
		{"a path", `^/\S*$`, absPath},
	}
	for _, p := range []string{GatewayTokenPrefix, "agentbox-gw", "/", "/x/", "x/", ""} {
		for _, n := range []int{0, 1, 19, 20, 21, 40} {
			v := runOf(alnum+"_-", n)
			values = append(values, p+v, p+v+" ", p+v+"\t", p+v+"\xff", p+v+"é", " "+p+v)
		}
	}
	for _, c := range checks {
		re := regexp.MustCompile(c.expr)
		matched := 0
		for _, v := range values {
			want := re.MatchString(v)
			if got := c.match(v); got != want {
				t.Errorf("%s: %q: %v, the regexp %s says %v", c.what, v, got, c.expr, want)
			}
			if want {
				matched++
			}
		}
		if matched == 0 {
			t.Errorf("%s: no value matched; the test proves nothing for it", c.what)
		}
	}
	for i, expr := range tokenShapeRegexps {
		re := regexp.MustCompile(expr)
		shape := tokenShapes[i]
		matched := 0
		for _, v := range values {
			want := re.MatchString(v)
			if got := shape.match(v); got != want {
				t.Errorf("%s: %q: %v, the regexp %s says %v", shape.what, v, got, expr, want)
			}
			if want {
				matched++
			}
		}
		if matched == 0 {
			t.Errorf("%s: no value matched; the test proves nothing for it", shape.what)
		}
	}
}
