package workspace

import (
	"bytes"
	"strings"
)

// Key is one git configuration entry: Name is section[.subsection].name
// with the section and the name lowercased (git's own canonical form; a
// subsection keeps its case), Value its value after unquoting.
type Key struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// ParseConfig reads a git config file as git does (config.c): sections
// "[core]", "[filter \"lfs\"]" and the old "[branch.main]", entries on the
// header's own line, comments after # and ;, quoted values with \" \\ \n
// \t \b escapes, and backslash-newline continuations. It never fails:
// where git would stop at a malformed line, it skips to the next line and
// goes on, so that it sees at least what git would act on.
func ParseConfig(data []byte) []Key {
	p := &configParser{b: bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))}
	for p.i < len(p.b) {
		p.line()
	}
	return p.keys
}

type configParser struct {
	b       []byte
	i       int
	section string // "core", "filter.lfs": what prefixes a key
	keys    []Key
}

func (p *configParser) peek() byte {
	if p.i < len(p.b) {
		return p.b[p.i]
	}
	return '\n'
}

func (p *configParser) skipSpace() {
	for p.i < len(p.b) && (p.b[p.i] == ' ' || p.b[p.i] == '\t' || p.b[p.i] == '\r') {
		p.i++
	}
}

func (p *configParser) skipLine() {
	for p.i < len(p.b) && p.b[p.i] != '\n' {
		p.i++
	}
	p.i++
}

// line reads what starts at p.i: blank, comment, section header (which
// may be followed by an entry on the same line) or entry.
func (p *configParser) line() {
	p.skipSpace()
	switch c := p.peek(); {
	case c == '\n':
		p.i++
	case c == '#' || c == ';':
		p.skipLine()
	case c == '[':
		if !p.header() {
			p.skipLine()
		}
	case isAlpha(c):
		p.entry()
	default:
		p.skipLine()
	}
}

// header reads [section], [section "sub"] or [section.sub].
func (p *configParser) header() bool {
	p.i++ // [
	start := p.i
	for p.i < len(p.b) && (isAlnum(p.b[p.i]) || p.b[p.i] == '-' || p.b[p.i] == '.') {
		p.i++
	}
	name := strings.ToLower(string(p.b[start:p.i]))
	if name == "" {
		return false
	}
	switch p.peek() {
	case ']':
		p.i++
		// The old form [section.sub] lowercases the subsection too.
		p.section = name
		return true
	case ' ', '\t':
		p.skipSpace()
		sub, ok := p.subsection()
		if !ok || strings.Contains(name, ".") {
			return false
		}
		p.section = name + "." + sub
		return true
	}
	return false
}

// subsection reads "sub"] with \" and \\ escapes.
func (p *configParser) subsection() (string, bool) {
	if p.peek() != '"' {
		return "", false
	}
	p.i++
	var sb strings.Builder
	for p.i < len(p.b) {
		c := p.b[p.i]
		p.i++
		switch c {
		case '\n':
			return "", false
		case '\\':
			if p.i < len(p.b) && p.b[p.i] != '\n' {
				sb.WriteByte(p.b[p.i])
				p.i++
			}
		case '"':
			if p.peek() != ']' {
				return "", false
			}
			p.i++
			return sb.String(), true
		default:
			sb.WriteByte(c)
		}
	}
	return "", false
}

// entry reads name [= value].
func (p *configParser) entry() {
	start := p.i
	for p.i < len(p.b) && (isAlnum(p.b[p.i]) || p.b[p.i] == '-') {
		p.i++
	}
	name := strings.ToLower(string(p.b[start:p.i]))
	p.skipSpace()
	value := ""
	switch p.peek() {
	case '=':
		p.i++
		value = p.value()
	case '\n', '#', ';':
		p.skipLine() // a bare name: boolean true
	default:
		p.skipLine()
		return
	}
	if p.section != "" {
		p.keys = append(p.keys, Key{Name: p.section + "." + name, Value: value})
	}
}

// value reads up to the end of the line, as git's parse_value does.
func (p *configParser) value() string {
	p.skipSpace()
	var sb strings.Builder
	quoted, pending := false, 0 // pending: unquoted spaces not yet known to be inner
	for p.i < len(p.b) {
		c := p.b[p.i]
		p.i++
		switch {
		case c == '\n':
			return sb.String()
		case !quoted && (c == ' ' || c == '\t' || c == '\r'):
			pending++
			continue
		case !quoted && (c == '#' || c == ';'):
			p.skipLine()
			return sb.String()
		}
		for ; pending > 0; pending-- {
			sb.WriteByte(' ')
		}
		switch c {
		case '\\':
			p.escape(&sb)
		case '"':
			quoted = !quoted
		default:
			sb.WriteByte(c)
		}
	}
	return sb.String()
}

func (p *configParser) escape(sb *strings.Builder) {
	if p.i >= len(p.b) {
		return
	}
	c := p.b[p.i]
	p.i++
	switch c {
	case '\n': // continuation
	case 'n':
		sb.WriteByte('\n')
	case 't':
		sb.WriteByte('\t')
	case 'b':
		sb.WriteByte('\b')
	default:
		sb.WriteByte(c) // \" \\ and, leniently, any other
	}
}

func isAlpha(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }
func isAlnum(c byte) bool { return isAlpha(c) || (c >= '0' && c <= '9') }

// execKey is a git configuration key whose value git executes, or that
// pulls in more configuration, without the user asking for it by name.
type execKey struct {
	section string
	sub     string // "" none, "*" any subsection
	name    string // "*" any name
	// bang, when true, matches only a value starting with "!" (a shell
	// command where the key otherwise names something else).
	bang bool
}

// ExecKeyPatterns are the executable keys, as git documents them
// (git-config(1)); "*" stands for any subsection or name. docs/workspace.md
// lists them with what runs each.
var ExecKeyPatterns = []string{
	"core.fsmonitor", "core.hookspath", "core.sshcommand", "core.pager", "core.editor",
	"core.askpass", "core.gitproxy", "core.alternaterefscommand",
	"sequence.editor", "diff.external", "interactive.difffilter",
	"filter.*.clean", "filter.*.smudge", "filter.*.process",
	"diff.*.textconv", "diff.*.command", "merge.*.driver",
	"credential.helper", "credential.*.helper",
	"gpg.program", "gpg.*.program",
	"include.path", "includeif.*.path",
	"pager.*", "alias.*!", "submodule.*.update!",
	"remote.*.uploadpack", "remote.*.receivepack",
	"difftool.*.cmd", "mergetool.*.cmd", "browser.*.cmd", "man.*.cmd",
	"uploadpack.packobjectshook",
}

var execKeys = compileExecKeys(ExecKeyPatterns)

func compileExecKeys(patterns []string) []execKey {
	out := make([]execKey, 0, len(patterns))
	for _, s := range patterns {
		k := execKey{}
		s, k.bang = strings.CutSuffix(s, "!")
		parts := strings.Split(s, ".")
		k.section, k.name = parts[0], parts[len(parts)-1]
		if len(parts) == 3 {
			k.sub = parts[1]
		}
		out = append(out, k)
	}
	return out
}

// ExecKeys returns the entries of keys that are executable keys.
func ExecKeys(keys []Key) []Key {
	var out []Key
	for _, k := range keys {
		if isExecKey(k) {
			out = append(out, k)
		}
	}
	return out
}

func isExecKey(k Key) bool {
	section, rest, ok := strings.Cut(k.Name, ".")
	if !ok {
		return false
	}
	sub, name := "", rest
	if i := strings.LastIndex(rest, "."); i >= 0 {
		sub, name = rest[:i], rest[i+1:]
	}
	for _, e := range execKeys {
		switch {
		case e.section != section, e.sub == "" && sub != "", e.sub == "*" && sub == "":
		case e.name != "*" && e.name != name:
		case e.bang && !strings.HasPrefix(strings.TrimSpace(k.Value), "!"):
		default:
			return true
		}
	}
	return false
}
