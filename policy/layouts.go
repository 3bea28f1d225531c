package policy

import (
	"path/filepath"
	"strings"
)

// layout is an install layout the command's closure recognises: the
// sequence of path components that ends at its prefix ("*" is any one
// component), and what the prefix holds, for Mount.Why.
type layout struct {
	seq []string
	why string
}

// layouts are tried in order on a directory the closure needs; the first
// that matches names the prefix to bind. Each prefix is the install and
// nothing around it: ~/.cargo/bin and not ~/.cargo, whose credentials.toml
// holds a registry token; one Node.js or Python version, not every one.
var layouts = []layout{
	{[]string{".local", "share", "claude"}, "the native Claude Code install (~/.local/share/claude), which ~/.local/bin/claude points into"},
	{[]string{"versions", "node", "*"}, "an nvm Node.js install prefix (its node, bin/ and lib/node_modules)"},
	{[]string{"node-versions", "*"}, "an fnm Node.js install (its node, bin/ and lib/node_modules)"},
	{[]string{".volta"}, "volta's home: its shims, tool images and the user's default platform, all of which a volta shim reads"},
	{[]string{".pyenv", "versions", "*"}, "a pyenv Python install prefix (its interpreter, libpython and standard library)"},
	{[]string{".pyenv"}, "pyenv's root: its shims run pyenv, which picks a version below it"},
	{[]string{"uv", "python", "*"}, "a uv-managed Python install"},
	{[]string{"uv", "tools", "*"}, "a uv tool's venv"},
	{[]string{"pipx", "venvs", "*"}, "a pipx venv"},
	{[]string{".linuxbrew"}, "the Homebrew on Linux prefix: its Cellar, opt links and the libraries its programs link against"},
	{[]string{".bun"}, "bun's install: its binary and global packages (install/global/node_modules)"},
	{[]string{".cargo", "bin"}, "cargo's bin directory (not ~/.cargo, which holds the registry credentials)"},
}

// Reasons for the prefixes no layout names.
const (
	whyNodeModules = "the node_modules that holds the package, so that its dependencies and its platform package (a sibling in the same node_modules) come along"
	whyVenv        = "a Python venv (it has a pyvenv.cfg)"
	whyBinParent   = "the install prefix, the directory above bin/"
	whyDir         = "the directory holding it"
)

// prefixCand is an install prefix for a directory, with what it is.
type prefixCand struct{ path, why string }

// prefixes are the install prefixes that would make dir visible, widest
// first and dir itself last: the layout's, the outermost node_modules, a
// venv's root, the directory above bin/ (except ~/.local: its share/
// holds keyrings), and dir.
func (r *resolver) prefixes(dir string) []prefixCand {
	var out []prefixCand
	for _, l := range layouts {
		if p := matchSeq(dir, l.seq); p != "" {
			out = append(out, prefixCand{p, l.why})
			break
		}
	}
	if p := matchSeq(dir, []string{"node_modules"}); p != "" {
		out = append(out, prefixCand{p, whyNodeModules})
	}
	if filepath.Base(dir) == "bin" {
		root := filepath.Dir(dir)
		if fi, err := r.h.FS.Stat(filepath.Join(root, "pyvenv.cfg")); err == nil && fi.Mode.IsRegular() {
			out = append(out, prefixCand{root, whyVenv})
		} else if filepath.Base(root) != ".local" && root != "/" {
			out = append(out, prefixCand{root, whyBinParent})
		}
	}
	return append(out, prefixCand{dir, whyDir})
}

// matchSeq returns dir up to the end of the first place where its
// components match seq, or "".
func matchSeq(dir string, seq []string) string {
	parts := strings.Split(strings.Trim(filepath.Clean(dir), "/"), "/")
	for i := 0; i+len(seq) <= len(parts); i++ {
		ok := true
		for j, s := range seq {
			if s != "*" && parts[i+j] != s {
				ok = false
				break
			}
		}
		if ok {
			return "/" + filepath.Join(parts[:i+len(seq)]...)
		}
	}
	return ""
}
