package account

import (
	"bufio"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// Assignment is one environment variable a login file sets. Value is kept
// only to recognise credentials: the audit never prints or serialises it.
type Assignment struct {
	Name  string `json:"name"`
	Value string `json:"-"`
	File  string `json:"file"`
	Line  int    `json:"line"`
}

// Syntaxes of the files that set a login's environment.
const (
	syntaxShell  = "sh"   // sh, bash, zsh: [export] NAME=value
	syntaxFish   = "fish" // set -x/-gx/-Ux NAME value
	syntaxEnvD   = "envd" // environment.d, /etc/environment: NAME=value
	syntaxPAMEnv = "pam"  // ~/.pam_environment: NAME DEFAULT=value | NAME=value
)

// profileFiles are the files under a home that set a login's or a shell's
// environment, with their syntax; a trailing /*.ext is every such file of
// the directory.
var profileFiles = []struct{ rel, syntax string }{
	{".profile", syntaxShell},
	{".bash_profile", syntaxShell},
	{".bash_login", syntaxShell},
	{".bashrc", syntaxShell},
	{".bash_aliases", syntaxShell},
	{".zshenv", syntaxShell},
	{".zprofile", syntaxShell},
	{".zshrc", syntaxShell},
	{".zlogin", syntaxShell},
	{".kshrc", syntaxShell},
	{".config/fish/config.fish", syntaxFish},
	{".config/fish/conf.d/*.fish", syntaxFish},
	{".config/environment.d/*.conf", syntaxEnvD},
	{".pam_environment", syntaxPAMEnv},
}

// systemEnvFiles are the system files every login's environment is built
// from (pam_env and systemd's user manager).
var systemEnvFiles = []struct{ path, syntax string }{
	{"/etc/environment", syntaxEnvD},
	{"/etc/environment.d/*.conf", syntaxEnvD},
}

// ProfileFiles lists the environment files that exist for a login of the
// account with home: the home's profiles first, then the system's (root
// prefixes the system paths; "" for /).
func ProfileFiles(home, root string) []string {
	var out []string
	for _, f := range profileFiles {
		out = append(out, existing(filepath.Join(home, f.rel))...)
	}
	for _, f := range systemEnvFiles {
		out = append(out, existing(filepath.Join(root, f.path))...)
	}
	return out
}

func existing(pattern string) []string {
	ms, _ := filepath.Glob(pattern) // the only error is a bad pattern: ours are fixed
	sort.Strings(ms)
	var out []string
	for _, m := range ms {
		if fi, err := os.Stat(m); err == nil && fi.Mode().IsRegular() {
			out = append(out, m)
		}
	}
	return out
}

// syntaxOf picks the syntax by the file's name.
func syntaxOf(p string) string {
	switch {
	case strings.HasSuffix(p, ".fish"):
		return syntaxFish
	case strings.HasSuffix(p, ".pam_environment"):
		return syntaxPAMEnv
	case strings.HasSuffix(p, ".conf"), strings.HasSuffix(p, "/environment"):
		return syntaxEnvD
	}
	return syntaxShell
}

// maxProfileSize bounds what is read of one file.
const maxProfileSize = 1 << 20

// ReadAssignments returns the variables file sets, in order. A missing file
// sets nothing.
func ReadAssignments(file string) ([]Assignment, error) {
	f, err := os.Open(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseAssignments(file, syntaxOf(file), io.LimitReader(f, maxProfileSize))
}

var (
	shellAssign = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(?:export\s+|(?:declare|typeset)\s+-[a-zA-Z]*x[a-zA-Z]*\s+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$`)
	})
	cshSetenv = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^setenv\s+([A-Za-z_][A-Za-z0-9_]*)\s+(.*)$`) })
	fishSet   = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^set\s+((?:-[a-zA-Z]+\s+|--[a-z]+\s+)+)([A-Za-z_][A-Za-z0-9_]*)(?:\s+(.*))?$`)
	})
	pamAssign = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)\s+(?:DEFAULT|OVERRIDE)=(.*)$`)
	})
)

// ParseAssignments reads assignments of the given syntax from r; file names
// them.
func ParseAssignments(file, syntax string, r io.Reader) ([]Assignment, error) {
	var out []Assignment
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxProfileSize)
	for n := 1; sc.Scan(); n++ {
		if name, value, ok := parseAssignment(syntax, strings.TrimSpace(sc.Text())); ok {
			out = append(out, Assignment{Name: name, Value: value, File: file, Line: n})
		}
	}
	return out, sc.Err()
}

func parseAssignment(syntax, t string) (name, value string, ok bool) {
	if t == "" || strings.HasPrefix(t, "#") {
		return "", "", false
	}
	switch syntax {
	case syntaxFish:
		m := fishSet().FindStringSubmatch(t)
		if m == nil || !fishExports(m[1]) {
			return "", "", false
		}
		return m[2], shellWord(m[3]), true
	case syntaxPAMEnv:
		if m := pamAssign().FindStringSubmatch(t); m != nil {
			return m[1], shellWord(m[2]), true
		}
	}
	if m := cshSetenv().FindStringSubmatch(t); m != nil && syntax == syntaxShell {
		return m[1], shellWord(m[2]), true
	}
	if m := shellAssign().FindStringSubmatch(t); m != nil {
		return m[1], shellWord(m[2]), true
	}
	return "", "", false
}

// fishExports reports whether fish set flags export the variable.
func fishExports(flags string) bool {
	for _, f := range strings.Fields(flags) {
		if f == "--export" || !strings.HasPrefix(f, "--") && strings.Contains(f, "x") {
			return true
		}
	}
	return false
}

// shellWord is the first word of v, unquoted: 'a b' and "a b" whole, else
// up to white space, ';' or '#'.
func shellWord(v string) string {
	v = strings.TrimSpace(v)
	if v == "" {
		return ""
	}
	if q := v[0]; q == '\'' || q == '"' {
		if end := strings.IndexByte(v[1:], q); end >= 0 {
			return v[1 : 1+end]
		}
		return v[1:]
	}
	if i := strings.IndexAny(v, " \t;#"); i >= 0 {
		return v[:i]
	}
	return v
}
