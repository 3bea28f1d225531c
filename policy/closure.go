package policy

import (
	"bufio"
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// The command's closure: what a command found on the host needs to run
// inside the sandbox besides its own file, each part bound read-only with
// the reason it is there (Mount.Why):
//
//   - every symlink on the way from the path found to the file (a link in
//     ~/.local/bin, a node_modules/.bin entry), and the file;
//   - the install prefix around each of them, chosen by layout (layouts):
//     an nvm or fnm Node.js, a pyenv or uv Python, a pipx or uv tool venv,
//     Homebrew on Linux, ~/.bun, ~/.cargo/bin, the native Claude Code, the
//     node_modules holding a Node package (so that its platform package
//     and dependencies, siblings in the same node_modules, come along:
//     npm, yarn and pnpm's .pnpm store alike), a Python venv, and else the
//     directory above bin/;
//   - the interpreter of a #! line, /usr/bin/env NAME and env -S included,
//     found as the sandbox will find it, recursively;
//   - a venv's base interpreter, the home of its pyvenv.cfg.
//
// Everything is read through Host.FS, so planning stays pure. A prefix
// that would be a home directory itself, hold one, expose a credential
// directory (HomeSecrets) or a system directory is never bound: the next
// narrower one is, down to the file's own directory, and when even that is
// refused the plan is refused with the fix.

// maxInterpreters bounds a chain of #! interpreters, as the kernel's
// binfmt_script does (it allows 4 levels of interpreter nesting).
const maxInterpreters = 4

// shebangSize is how much of a script the kernel reads for its #! line
// (BINPRM_BUF_SIZE).
const shebangSize = 256

// pyvenvSize bounds the pyvenv.cfg read: a few short key = value lines.
const pyvenvSize = 4096

// bindClosure makes p, a program, runnable inside: p's symlink chain, the
// install prefixes around it, and its interpreters. subject names p for
// the reasons ("command codex").
func (r *resolver) bindClosure(subject, p string, depth int) error {
	real, hops, err := r.walk(p)
	if err != nil {
		return &InputError{Field: "command", Msg: fmt.Sprintf("%s: %s: %v", subject, p, err), Fix: "check the command's install"}
	}
	if err := r.needLinks(hops, "on the way to "+subject); err != nil {
		return err
	}
	if err := r.need(filepath.Dir(real), fmt.Sprintf("%s (%s)", subject, real)); err != nil {
		return err
	}
	return r.bindInterpreter(subject, real, depth)
}

// needLinks makes each symlink a walk followed visible where it is, so
// that the path resolves inside as it does outside; the links of the
// synthesized root (/bin -> usr/bin) are there already.
func (r *resolver) needLinks(hops []hop, role string) error {
	for _, h := range hops {
		if _, system := r.plan.Rootfs.Symlinks[h.link]; system || r.visible(h.link) {
			continue
		}
		if err := r.need(filepath.Dir(h.link), fmt.Sprintf("the symlink %s -> %s %s", h.link, h.target, role)); err != nil {
			return err
		}
	}
	return nil
}

// bindInterpreter binds the interpreter that real's #! line names, and
// its closure. A program without one (an ELF binary) needs nothing more;
// an interpreter that cannot be found is left for the command to report,
// as it would outside the sandbox.
func (r *resolver) bindInterpreter(subject, real string, depth int) error {
	head, err := r.h.FS.ReadHead(real, shebangSize)
	if err != nil {
		return nil // unreadable here: the sandbox, as this user, could not run it either
	}
	interp, name, ok := parseShebang(head)
	if !ok {
		return nil
	}
	if depth >= maxInterpreters {
		return &InputError{Field: "command", Msg: fmt.Sprintf("%s: %s is interpreted by %s, more than %d interpreters deep", subject, real, interp, maxInterpreters), Fix: "name the final interpreter as the command"}
	}
	who := fmt.Sprintf("the interpreter %s of %s's #! line", interp, real)
	if name == "" {
		return r.bindClosure(who, interp, depth+1)
	}
	who = fmt.Sprintf("the interpreter %s (%s %s) of %s's #! line", name, interp, name, real)
	found, err := r.h.FS.LookPath(name)
	if err != nil {
		return nil
	}
	return r.bindFound(who, r.abs(found), depth+1)
}

// bindFound binds the closure of found, a program found on the host's
// PATH, and puts its directory in front of PATH inside when it lies
// outside the system directories, so that the sandbox finds the same one.
func (r *resolver) bindFound(subject, found string, depth int) error {
	if dir := filepath.Dir(found); !r.visible(found) && !slices.Contains(r.bins, dir) {
		r.bins = append(r.bins, dir)
	}
	return r.bindClosure(subject, found, depth)
}

// parseShebang reads a #! line: the interpreter's path and, when that is
// env, the command name env runs (after its options and NAME=VALUE
// assignments; the rest of the line is one argument, which env -S splits).
// ok is false without a #! line.
func parseShebang(head []byte) (interp, name string, ok bool) {
	rest, found := bytes.CutPrefix(head, []byte("#!"))
	if !found {
		return "", "", false
	}
	line, _, _ := bytes.Cut(rest, []byte("\n"))
	line = bytes.Trim(line, " \t\r")
	interpB, argB := line, []byte(nil)
	if i := bytes.IndexAny(line, " \t"); i >= 0 {
		interpB, argB = line[:i], bytes.TrimLeft(line[i:], " \t")
	}
	if len(interpB) == 0 {
		return "", "", false
	}
	interp = string(interpB)
	if filepath.Base(interp) != "env" {
		return interp, "", true
	}
	return interp, envCommand(string(argB)), true
}

// envCommand is the program env runs for its one argument arg: arg itself,
// or with -S (--split-string) the first word after env's options and
// assignments. "" when it names none.
func envCommand(arg string) string {
	words, split := []string{arg}, false
	for _, w := range strings.Fields(arg) {
		split = split || strings.HasPrefix(w, "-S") || strings.HasPrefix(w, "--split-string")
	}
	if split {
		words = nil
		for _, w := range strings.Fields(arg) {
			if rest, ok := strings.CutPrefix(w, "--split-string="); ok {
				w = rest
			} else if rest, ok := strings.CutPrefix(w, "-S"); ok && !strings.HasPrefix(w, "--") {
				w = rest
			}
			words = append(words, w)
		}
	}
	for i := 0; i < len(words); i++ {
		w := words[i]
		switch {
		case w == "-u" || w == "--unset" || w == "-C" || w == "--chdir":
			i++ // the option's value
		case w == "" || strings.HasPrefix(w, "-") || strings.Contains(w, "="):
		default:
			return w
		}
	}
	return ""
}

// need makes directory dir visible inside: nothing when a mount already
// shows it, else a read-only bind of the install prefix around it, the
// widest that layouts name and the classifier accepts.
func (r *resolver) need(dir, role string) error {
	if r.visible(dir) {
		return r.venvOf(dir)
	}
	cands := r.prefixes(dir)
	for _, c := range cands {
		if cl := r.classifyInstall(c.path); cl.Code == "" || cl.Code != CodeHostRoot && r.accepts(cl.Code, c.path) {
			r.addInstall(c.path, role+": "+c.why)
			return r.venvOf(dir)
		}
	}
	narrow := cands[len(cands)-1].path
	return r.refuseInstall(role, narrow, r.classifyInstall(narrow))
}

// refuseInstall says why no prefix of a command's closure can be bound,
// and what to do instead.
func (r *resolver) refuseInstall(role, dir string, c PathClass) error {
	fix := "install it under a prefix of its own (for example ~/.local/opt/NAME/bin) or in /usr/local"
	switch c.Code {
	case CodeHome:
		if strings.Contains(c.What, "credentials") {
			fix = "move the program out of the credential directory, for example to ~/.local/opt/NAME/bin"
		}
	case CodeSystem:
		fix = "install it under /usr/local or /opt, which the sandbox may see read-only"
	}
	if c.Code != CodeHostRoot {
		fix += "; or " + AcceptHint(c.Code, dir)
	}
	return &PathRefusal{Code: c.Code, Path: dir, Err: &InputError{Field: "command", Msg: fmt.Sprintf("%s needs %s, which %s", role, dir, c.What), Fix: fix}}
}

// addInstall binds prefix read-only for the closure, folding in the
// closure binds it contains.
func (r *resolver) addInstall(prefix, why string) {
	kept := r.plan.Mounts[:0]
	for _, m := range r.plan.Mounts {
		if m.Kind == KindInstall && within(m.Source, prefix) {
			why += "; " + m.Why
			continue
		}
		kept = append(kept, m)
	}
	r.plan.Mounts = append(kept, Mount{Kind: KindInstall, Source: prefix, Destination: prefix, ReadOnly: true, Why: why})
}

// venvOf binds the base interpreter of the Python venv that directory dir
// is or is the bin/ of, if it is in one: the home directory its
// pyvenv.cfg names, whose python the venv's bin/python links to or
// copies. Each venv is looked at once.
func (r *resolver) venvOf(dir string) error {
	root := dir
	if filepath.Base(dir) == "bin" {
		root = filepath.Dir(dir)
	}
	if r.venvs[root] {
		return nil
	}
	if r.venvs == nil {
		r.venvs = map[string]bool{}
	}
	r.venvs[root] = true
	cfg := filepath.Join(root, "pyvenv.cfg")
	data, err := r.h.FS.ReadHead(cfg, pyvenvSize)
	if err != nil {
		return nil // not a venv
	}
	home := pyvenvHome(data)
	if !filepath.IsAbs(home) {
		return nil
	}
	real, hops, err := r.walk(home)
	if err != nil {
		return nil // the venv is broken on the host too
	}
	role := fmt.Sprintf("the base interpreter of the venv %s (home in %s)", root, cfg)
	if err := r.needLinks(hops, "to "+role); err != nil {
		return err
	}
	return r.need(real, role)
}

// pyvenvHome is the value of the home key of a pyvenv.cfg, or "".
func pyvenvHome(data []byte) string {
	s := bufio.NewScanner(bytes.NewReader(data))
	for s.Scan() {
		k, v, ok := strings.Cut(s.Text(), "=")
		if ok && strings.TrimSpace(k) == "home" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
