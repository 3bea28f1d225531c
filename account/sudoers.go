package account

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// SudoRule is one sudoers line that gives the account rights: a user
// specification whose user list matches it, or a Defaults entry that turns
// authentication off for it.
type SudoRule struct {
	File string `json:"file"`
	Line int    `json:"line"`
	// Text is the line as written (continuations joined).
	Text string `json:"text"`
	// Via is the user-list entry that matched: "agentbox-agent", "%docker",
	// "ALL", "#1001", an alias.
	Via string `json:"via"`
	// NoPasswd is true when the rule asks no password (NOPASSWD: or
	// Defaults !authenticate): an account without a password can use it.
	NoPasswd bool `json:"nopasswd,omitempty"`
}

// Sudo is what the sudoers files give an account.
type Sudo struct {
	Rules []SudoRule `json:"rules,omitempty"`
	// Errors name the files that could not be read; the answer is then
	// incomplete.
	Errors []string `json:"errors,omitempty"`
}

// maxIncludeDepth bounds nested includes, as sudo's 128.
const maxIncludeDepth = 128

// SudoRights parses the sudoers file at path and the files it includes
// (#include, @include, #includedir, @includedir) and returns the rules that
// apply to a. Nothing is run; sudo itself need not be installed.
func SudoRights(a Account, path string) Sudo {
	p := &sudoParser{acct: a, aliases: map[string][]string{}}
	p.file(path, 0)
	if p.authOff && len(p.out.Rules) > 0 {
		for i := range p.out.Rules {
			p.out.Rules[i].NoPasswd = true
		}
		p.out.Rules = append(p.out.Rules, p.authRules...)
	}
	sort.SliceStable(p.out.Rules, func(i, j int) bool { return p.out.Rules[i].File < p.out.Rules[j].File })
	return p.out
}

type sudoParser struct {
	acct    Account
	aliases map[string][]string
	out     Sudo
	// authOff is set by a Defaults !authenticate that applies to the
	// account; authRules are those lines, reported only beside a rule.
	authOff   bool
	authRules []SudoRule
}

func (p *sudoParser) file(path string, depth int) {
	if depth > maxIncludeDepth {
		p.out.Errors = append(p.out.Errors, path+": includes nested too deep")
		return
	}
	b, err := os.ReadFile(path)
	if depth == 0 && errors.Is(err, fs.ErrNotExist) {
		return // no sudoers: sudo is not installed, nobody has rights
	}
	if err != nil {
		p.out.Errors = append(p.out.Errors, err.Error())
		return
	}
	for _, l := range joinLines(b) {
		p.line(path, l, depth)
	}
}

type sudoLine struct {
	n    int
	text string
}

// joinLines splits sudoers text into logical lines (a trailing backslash
// continues a line), numbered by their first physical line.
func joinLines(b []byte) []sudoLine {
	var out []sudoLine
	var cur strings.Builder
	start, n := 0, 0
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		n++
		if cur.Len() == 0 {
			start = n
		}
		t := sc.Text()
		if strings.HasSuffix(t, `\`) {
			cur.WriteString(strings.TrimSuffix(t, `\`) + " ")
			continue
		}
		cur.WriteString(t)
		out = append(out, sudoLine{start, strings.TrimSpace(cur.String())})
		cur.Reset()
	}
	if cur.Len() > 0 {
		out = append(out, sudoLine{start, strings.TrimSpace(cur.String())})
	}
	return out
}

var (
	includeRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[#@](include|includedir)\s+(.+)$`) })
	uidRe     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^#[0-9]+\s`) })
	commaRe   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\s*,\s*`) })
	noAuthRe  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(^|[\s,])!\s*authenticate\b`) })
	noPassRe  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\bNOPASSWD\s*:`) })
)

func (p *sudoParser) line(file string, l sudoLine, depth int) {
	t := l.text
	if m := includeRe().FindStringSubmatch(t); m != nil {
		p.include(file, m[1], strings.Trim(m[2], `"`), depth)
		return
	}
	if t == "" || strings.HasPrefix(t, "#") && !uidRe().MatchString(t) {
		return
	}
	t = stripComment(t)
	switch first := strings.Fields(t)[0]; {
	case first == "User_Alias":
		p.alias(strings.TrimPrefix(t, first))
	case strings.HasSuffix(first, "_Alias"):
	case strings.HasPrefix(first, "Defaults"):
		p.defaults(file, l.n, t)
	default:
		p.spec(file, l.n, t)
	}
}

// stripComment drops a trailing "# comment" (a # after white space that is
// not a uid).
func stripComment(t string) string {
	for i := 1; i < len(t); i++ {
		if t[i] == '#' && (t[i-1] == ' ' || t[i-1] == '\t') && (i+1 == len(t) || t[i+1] < '0' || t[i+1] > '9') {
			return strings.TrimSpace(t[:i])
		}
	}
	return t
}

func (p *sudoParser) include(from, kind, target string, depth int) {
	if !filepath.IsAbs(target) {
		target = filepath.Join(filepath.Dir(from), target)
	}
	if kind == "include" {
		p.file(target, depth+1)
		return
	}
	es, err := os.ReadDir(target)
	if errors.Is(err, fs.ErrNotExist) {
		return // sudo ignores a missing include directory
	}
	if err != nil {
		p.out.Errors = append(p.out.Errors, err.Error())
		return
	}
	for _, e := range es {
		// sudo skips names with a dot or ending in ~ (editor backups).
		if n := e.Name(); !e.IsDir() && !strings.Contains(n, ".") && !strings.HasSuffix(n, "~") {
			p.file(filepath.Join(target, n), depth+1)
		}
	}
}

// alias records "NAME = a, b : NAME2 = c".
func (p *sudoParser) alias(t string) {
	for _, def := range strings.Split(t, ":") {
		name, list, ok := strings.Cut(def, "=")
		if ok {
			p.aliases[strings.TrimSpace(name)] = strings.Split(commaRe().ReplaceAllString(strings.TrimSpace(list), ","), ",")
		}
	}
}

// defaults records "Defaults:LIST !authenticate" (or plain Defaults, which
// names everyone) as a rule: authentication is off for the account.
func (p *sudoParser) defaults(file string, n int, t string) {
	head, body, _ := strings.Cut(strings.Replace(t, "\t", " ", 1), " ")
	if !noAuthRe().MatchString(body) {
		return
	}
	via := "Defaults"
	switch {
	case strings.HasPrefix(head, "Defaults:"):
		list := strings.Split(commaRe().ReplaceAllString(strings.TrimPrefix(head, "Defaults:"), ","), ",")
		v, ok := p.matchList(list, 0)
		if !ok {
			return
		}
		via = v
	case head != "Defaults":
		return // Defaults@host, Defaults>runas, Defaults!cmnd: not per user
	}
	p.authOff = true
	p.authRules = append(p.authRules, SudoRule{File: file, Line: n, Text: t, Via: via, NoPasswd: true})
}

// spec records a user specification "USERS HOSTS = (RUNAS) TAGS: CMNDS"
// whose user list matches the account.
func (p *sudoParser) spec(file string, n int, t string) {
	lhs, rhs, ok := strings.Cut(t, "=")
	if !ok {
		return
	}
	fields := strings.Fields(commaRe().ReplaceAllString(strings.TrimSpace(lhs), ","))
	if len(fields) < 2 {
		return
	}
	via, ok := p.matchList(strings.Split(fields[0], ","), 0)
	if !ok {
		return
	}
	nopw := noPassRe().MatchString(rhs)
	p.out.Rules = append(p.out.Rules, SudoRule{File: file, Line: n, Text: t, Via: via, NoPasswd: nopw})
}

// matchList is sudo's list matching: each entry that matches sets the
// answer (a ! entry to "no"); the last match wins.
func (p *sudoParser) matchList(list []string, depth int) (string, bool) {
	via, ok := "", false
	for _, item := range list {
		neg := strings.HasPrefix(item, "!")
		item = strings.TrimSpace(strings.TrimPrefix(item, "!"))
		if p.matchItem(item, depth) {
			via, ok = item, !neg
		}
	}
	return via, ok
}

func (p *sudoParser) matchItem(item string, depth int) bool {
	a := p.acct
	switch {
	case item == "ALL" || item == a.Name:
		return true
	case strings.HasPrefix(item, "%#"):
		gid, err := strconv.Atoi(item[2:])
		return err == nil && a.InGroup(gid)
	case strings.HasPrefix(item, "%"):
		return contains(a.GroupNames(), strings.TrimPrefix(strings.TrimPrefix(item, "%"), ":"))
	case strings.HasPrefix(item, "#"):
		return item == fmt.Sprintf("#%d", a.UID)
	}
	if list, ok := p.aliases[item]; ok && depth < maxIncludeDepth {
		_, m := p.matchList(list, depth+1)
		return m
	}
	return false
}
