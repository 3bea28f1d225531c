package policy

import (
	"fmt"
	"strings"
	"unicode"
)

// maxDiffCells bounds the line diff's table (old lines × new lines); past
// it the diff shows every old line removed and every new line added.
const maxDiffCells = 1 << 22

// LineDiff shows how new differs from old, line by line: "- " for a removed
// line, "+ " for an added one, "  " for a kept one. Control characters are
// escaped, since the text may be the agent's and goes to a terminal.
func LineDiff(old, new string) string {
	a, b := splitLines(old), splitLines(new)
	var out strings.Builder
	for _, op := range diffOps(a, b) {
		fmt.Fprintf(&out, "%c %s\n", op.mark, printable(op.line))
	}
	return strings.TrimSuffix(out.String(), "\n")
}

type diffOp struct {
	mark byte
	line string
}

// diffOps is the longest-common-subsequence edit script of a into b.
func diffOps(a, b []string) []diffOp {
	if len(a)*len(b) > maxDiffCells {
		var ops []diffOp
		for _, l := range a {
			ops = append(ops, diffOp{'-', l})
		}
		for _, l := range b {
			ops = append(ops, diffOp{'+', l})
		}
		return ops
	}
	// lcs[i][j] is the LCS length of a[i:] and b[j:].
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var ops []diffOp
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			ops = append(ops, diffOp{' ', a[i]})
			i, j = i+1, j+1
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			ops = append(ops, diffOp{'-', a[i]})
			i++
		default:
			ops = append(ops, diffOp{'+', b[j]})
			j++
		}
	}
	return ops
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// printable escapes what a terminal would interpret: control characters
// (escape sequences among them) and invalid UTF-8 become \xNN or \u{N}.
func printable(s string) string {
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == unicode.ReplacementChar && !strings.HasPrefix(s[i:], "\uFFFD"):
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\t':
			b.WriteRune(r)
		case unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || unicode.Is(unicode.Bidi_Control, r):
			fmt.Fprintf(&b, `\u{%x}`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
