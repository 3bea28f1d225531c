package policy

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// tree adds files to a fake host: each path's parents become directories
// (owned by ana below /home/ana, else by root) and each entry is a
// program, a script with its contents, or a symlink.
type tree struct {
	f   *fakeFS
	uid uint32
}

func (t tree) mkdirs(p string) {
	for d := filepath.Dir(p); d != "/"; d = filepath.Dir(d) {
		if _, ok := t.f.files[d]; ok {
			continue
		}
		if _, ok := t.f.links[d]; ok {
			continue
		}
		uid := uint32(0)
		if within(d, "/home/ana") {
			uid = 1000
		}
		t.f.dir(d, uid, uid)
	}
}

func (t tree) bin(p string)               { t.mkdirs(p); t.f.file(p, 0o755, t.uid) }
func (t tree) script(p, contents string)  { t.mkdirs(p); t.f.script(p, 0o755, t.uid, contents) }
func (t tree) data(p, contents string)    { t.mkdirs(p); t.f.script(p, 0o644, t.uid, contents) }
func (t tree) link(p, target string)      { t.mkdirs(p); t.f.link(p, target) }
func (t tree) onPath(name, p string)      { t.f.path[name] = p }
func (t tree) program(name, p string)     { t.bin(p); t.onPath(name, p) }
func (t tree) nodeCLI(p string)           { t.script(p, "#!/usr/bin/env node\nimport './x.js'\n") }
func (t tree) pythonCLI(p, python string) { t.script(p, "#!"+python+"\nimport sys\n") }

// codexPackage lays out @openai/codex and its platform package in the
// node_modules nm, with bin/codex.js a node script.
func (t tree) codexPackage(nm string) {
	t.nodeCLI(nm + "/@openai/codex/bin/codex.js")
	t.bin(nm + "/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/codex/codex")
}

func TestCommandClosure(t *testing.T) {
	const (
		ana  = "/home/ana"
		nvm  = ana + "/.nvm/versions/node/v22.1.0"
		proj = ana + "/src/app" // a project of ana's, not the workspace
	)
	tests := []struct {
		name      string
		root      bool // the launcher is root with HOME=/root; else ana
		setup     func(tree)
		argv      string
		wantBinds []string
		wantPath  []string // install directories in front of SystemPath
		wantWhy   []string // a word each bind's reason must contain, in bind order
	}{
		{
			name: "npm local node_modules/.bin",
			setup: func(t tree) {
				t.codexPackage(proj + "/node_modules")
				t.link(proj+"/node_modules/.bin/codex", "../@openai/codex/bin/codex.js")
				t.onPath("codex", proj+"/node_modules/.bin/codex")
				t.program("node", "/usr/bin/node")
			},
			argv:      "codex",
			wantBinds: []string{proj + "/node_modules"},
			wantPath:  []string{proj + "/node_modules/.bin"},
			wantWhy:   []string{"platform package"},
		},
		{
			name: "pnpm .pnpm store",
			setup: func(t tree) {
				store := proj + "/node_modules/.pnpm/@openai+codex@0.171.0/node_modules"
				t.codexPackage(store)
				t.link(proj+"/node_modules/@openai/codex", ".pnpm/@openai+codex@0.171.0/node_modules/@openai/codex")
				t.script(proj+"/node_modules/.bin/codex", "#!/bin/sh\nbasedir=$(dirname \"$0\")\nexec node \"$basedir/../@openai/codex/bin/codex.js\" \"$@\"\n")
				t.onPath("codex", proj+"/node_modules/.bin/codex")
			},
			argv:      "codex",
			wantBinds: []string{proj + "/node_modules"},
			wantPath:  []string{proj + "/node_modules/.bin"},
			wantWhy:   []string{"node_modules"},
		},
		{
			name: "yarn classic global",
			setup: func(t tree) {
				t.codexPackage(ana + "/.config/yarn/global/node_modules")
				t.link(ana+"/.yarn/bin/codex", "../../.config/yarn/global/node_modules/@openai/codex/bin/codex.js")
				t.onPath("codex", ana+"/.yarn/bin/codex")
			},
			argv:      "codex",
			wantBinds: []string{ana + "/.config/yarn/global/node_modules", ana + "/.yarn"},
			wantPath:  []string{ana + "/.yarn/bin"},
			wantWhy:   []string{"platform package", "symlink " + ana + "/.yarn/bin/codex"},
		},
		{
			name: "npm global under a custom prefix",
			setup: func(t tree) {
				t.codexPackage("/srv/npm/lib/node_modules")
				t.link("/srv/npm/bin/codex", "../lib/node_modules/@openai/codex/bin/codex.js")
				t.onPath("codex", "/srv/npm/bin/codex")
			},
			argv:      "codex",
			wantBinds: []string{"/srv/npm"},
			wantPath:  []string{"/srv/npm/bin"},
			wantWhy:   []string{"above bin/"},
		},
		{
			name: "npm global under /usr/local is already visible",
			setup: func(t tree) {
				t.codexPackage("/usr/local/lib/node_modules")
				t.link("/usr/local/bin/codex", "../lib/node_modules/@openai/codex/bin/codex.js")
				t.onPath("codex", "/usr/local/bin/codex")
			},
			argv: "codex",
		},
		{
			name: "nvm: the CLI and its env node",
			setup: func(t tree) {
				t.codexPackage(nvm + "/lib/node_modules")
				t.link(nvm+"/bin/codex", "../lib/node_modules/@openai/codex/bin/codex.js")
				t.onPath("codex", nvm+"/bin/codex")
				t.program("node", nvm+"/bin/node")
			},
			argv:      "codex",
			wantBinds: []string{nvm},
			wantPath:  []string{nvm + "/bin"},
			wantWhy:   []string{"nvm"},
		},
		{
			name: "local node_modules run by an nvm node",
			setup: func(t tree) {
				t.codexPackage(proj + "/node_modules")
				t.link(proj+"/node_modules/.bin/codex", "../@openai/codex/bin/codex.js")
				t.onPath("codex", proj+"/node_modules/.bin/codex")
				t.program("node", nvm+"/bin/node")
			},
			argv:      "codex",
			wantBinds: []string{nvm, proj + "/node_modules"},
			wantPath:  []string{proj + "/node_modules/.bin", nvm + "/bin"},
			wantWhy:   []string{"interpreter node", "platform package"},
		},
		{
			name: "fnm through a multishell link",
			setup: func(t tree) {
				inst := ana + "/.local/share/fnm/node-versions/v20.11.0/installation"
				t.bin(inst + "/bin/node")
				t.link(ana+"/.local/state/fnm_multishells/4242_17", inst)
				t.onPath("node", ana+"/.local/state/fnm_multishells/4242_17/bin/node")
			},
			argv:      "node",
			wantBinds: []string{ana + "/.local/share/fnm/node-versions/v20.11.0", ana + "/.local/state/fnm_multishells"},
			wantPath:  []string{ana + "/.local/state/fnm_multishells/4242_17/bin"},
			wantWhy:   []string{"fnm", "symlink"},
		},
		{
			name: "volta shim",
			setup: func(t tree) {
				t.bin(ana + "/.volta/bin/volta-shim")
				t.bin(ana + "/.volta/tools/image/node/22.1.0/bin/node")
				t.link(ana+"/.volta/bin/codex", "volta-shim")
				t.onPath("codex", ana+"/.volta/bin/codex")
			},
			argv:      "codex",
			wantBinds: []string{ana + "/.volta"},
			wantPath:  []string{ana + "/.volta/bin"},
			wantWhy:   []string{"volta"},
		},
		{
			name: "venv on a pyenv python",
			setup: func(t tree) {
				py := ana + "/.pyenv/versions/3.12.1"
				t.bin(py + "/bin/python3.12")
				t.link("/srv/venv/bin/python", py+"/bin/python3.12")
				t.data("/srv/venv/pyvenv.cfg", "home = "+py+"/bin\ninclude-system-site-packages = false\nversion = 3.12.1\n")
				t.pythonCLI("/srv/venv/bin/hello", "/srv/venv/bin/python")
				t.onPath("hello", "/srv/venv/bin/hello")
			},
			argv:      "hello",
			wantBinds: []string{ana + "/.pyenv/versions/3.12.1", "/srv/venv"},
			wantPath:  []string{"/srv/venv/bin"},
			wantWhy:   []string{"pyenv", "venv"},
		},
		{
			name: "root's venv on root's pyenv python",
			root: true,
			setup: func(t tree) {
				py := "/root/.pyenv/versions/3.12.1"
				t.bin(py + "/bin/python3.12")
				t.link("/srv/venv/bin/python", "python3.12")
				t.link("/srv/venv/bin/python3.12", py+"/bin/python3.12")
				t.data("/srv/venv/pyvenv.cfg", "home = "+py+"/bin\n")
				t.pythonCLI("/srv/venv/bin/hello", "/srv/venv/bin/python")
				t.onPath("hello", "/srv/venv/bin/hello")
			},
			argv:      "hello",
			wantBinds: []string{"/root/.pyenv/versions/3.12.1", "/srv/venv"},
			wantPath:  []string{"/srv/venv/bin"},
			wantWhy:   []string{"pyvenv.cfg", "venv"},
		},
		{
			name: "pyenv shim",
			setup: func(t tree) {
				t.script(ana+"/.pyenv/shims/python", "#!/usr/bin/env bash\nexec pyenv exec python \"$@\"\n")
				t.onPath("python", ana+"/.pyenv/shims/python")
				t.program("bash", "/usr/bin/bash")
			},
			argv:      "python",
			wantBinds: []string{ana + "/.pyenv"},
			wantPath:  []string{ana + "/.pyenv/shims"},
			wantWhy:   []string{"pyenv's root"},
		},
		{
			name: "uv tool on a uv python",
			setup: func(t tree) {
				py := ana + "/.local/share/uv/python/cpython-3.12.4-linux-x86_64-gnu"
				tool := ana + "/.local/share/uv/tools/aider-chat"
				t.bin(py + "/bin/python3.12")
				t.link(tool+"/bin/python", py+"/bin/python3.12")
				t.data(tool+"/pyvenv.cfg", "home = "+py+"/bin\n")
				t.pythonCLI(tool+"/bin/aider", tool+"/bin/python")
				t.link(ana+"/.local/bin/aider", tool+"/bin/aider")
				t.onPath("aider", ana+"/.local/bin/aider")
			},
			argv:      "aider",
			wantBinds: []string{ana + "/.local/bin", ana + "/.local/share/uv/python/cpython-3.12.4-linux-x86_64-gnu", ana + "/.local/share/uv/tools/aider-chat"},
			wantPath:  []string{ana + "/.local/bin"},
			wantWhy:   []string{"symlink", "uv-managed", "uv tool"},
		},
		{
			name: "pipx venv on a system python",
			setup: func(t tree) {
				venv := ana + "/.local/share/pipx/venvs/aider-chat"
				t.bin("/usr/bin/python3.11")
				t.link(venv+"/bin/python", "/usr/bin/python3.11")
				t.data(venv+"/pyvenv.cfg", "home = /usr/bin\n")
				t.pythonCLI(venv+"/bin/aider", venv+"/bin/python")
				t.link(ana+"/.local/bin/aider", venv+"/bin/aider")
				t.onPath("aider", ana+"/.local/bin/aider")
			},
			argv:      "aider",
			wantBinds: []string{ana + "/.local/bin", ana + "/.local/share/pipx/venvs/aider-chat"},
			wantPath:  []string{ana + "/.local/bin"},
			wantWhy:   []string{"symlink", "pipx"},
		},
		{
			name: "Homebrew on Linux",
			setup: func(t tree) {
				brew := "/home/linuxbrew/.linuxbrew"
				t.nodeCLI(brew + "/lib/node_modules/@google/gemini-cli/dist/index.js")
				t.link(brew+"/bin/gemini", "../lib/node_modules/@google/gemini-cli/dist/index.js")
				t.bin(brew + "/Cellar/node/22.1.0/bin/node")
				t.link(brew+"/bin/node", "../Cellar/node/22.1.0/bin/node")
				t.onPath("gemini", brew+"/bin/gemini")
				t.onPath("node", brew+"/bin/node")
			},
			argv:      "gemini",
			wantBinds: []string{"/home/linuxbrew/.linuxbrew"},
			wantPath:  []string{"/home/linuxbrew/.linuxbrew/bin"},
			wantWhy:   []string{"Homebrew"},
		},
		{
			name: "bun global",
			setup: func(t tree) {
				t.codexPackage(ana + "/.bun/install/global/node_modules")
				t.link(ana+"/.bun/bin/codex", "../install/global/node_modules/@openai/codex/bin/codex.js")
				t.onPath("codex", ana+"/.bun/bin/codex")
				t.program("node", ana+"/.bun/bin/node")
			},
			argv:      "codex",
			wantBinds: []string{ana + "/.bun"},
			wantPath:  []string{ana + "/.bun/bin"},
			wantWhy:   []string{"bun"},
		},
		{
			name: "cargo bin, never ~/.cargo",
			setup: func(t tree) {
				t.program("goose", ana+"/.cargo/bin/goose")
				t.data(ana+"/.cargo/credentials.toml", "[registry]\ntoken = \"x\"\n")
			},
			argv:      "goose",
			wantBinds: []string{ana + "/.cargo/bin"},
			wantPath:  []string{ana + "/.cargo/bin"},
			wantWhy:   []string{"cargo"},
		},
		{
			name: "native Claude Code",
			setup: func(t tree) {
				t.bin(ana + "/.local/share/claude/versions/2.1.332")
				t.link(ana+"/.local/bin/claude", ana+"/.local/share/claude/versions/2.1.332")
				t.onPath("claude", ana+"/.local/bin/claude")
			},
			argv:      "claude",
			wantBinds: []string{ana + "/.local/bin", ana + "/.local/share/claude"},
			wantPath:  []string{ana + "/.local/bin"},
			wantWhy:   []string{"symlink", "native Claude Code"},
		},
		{
			name: "env -S with options and an assignment",
			setup: func(t tree) {
				t.script("/srv/tools/bin/run", "#!/usr/bin/env -S -u DEBUG NODE_OPTIONS=--x node --no-warnings\n")
				t.onPath("run", "/srv/tools/bin/run")
				t.program("node", nvm+"/bin/node")
			},
			argv:      "run",
			wantBinds: []string{nvm, "/srv/tools"},
			wantPath:  []string{"/srv/tools/bin", nvm + "/bin"},
			wantWhy:   []string{"interpreter node", "above bin/"},
		},
		{
			name: "a command in the workspace needs nothing",
			setup: func(t tree) {
				t.codexPackage("/srv/proj/node_modules")
				t.link("/srv/proj/node_modules/.bin/codex", "../@openai/codex/bin/codex.js")
				t.onPath("codex", "/srv/proj/node_modules/.bin/codex")
			},
			argv: "codex",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan, err := resolve(t, Policy{}, []string{tt.argv}, func(f *fakeFS, h *Host) {
				uid := uint32(1000)
				if tt.root {
					uid = 0
				} else {
					h.EUID, h.Home = 1000, "/home/ana"
				}
				tt.setup(tree{f, uid})
			})
			if err != nil {
				t.Fatal(err)
			}
			var got, whys []string
			for _, m := range mountsOf(plan, KindInstall) {
				if !m.ReadOnly || m.Source != m.Destination {
					t.Errorf("closure bind %+v: want read-only at the same path", m)
				}
				got, whys = append(got, m.Source), append(whys, m.Why)
			}
			if d := cmp.Diff(tt.wantBinds, got); d != "" {
				t.Errorf("closure binds (-want +got):\n%s", d)
			}
			for i, w := range tt.wantWhy {
				if i >= len(whys) || !strings.Contains(whys[i], w) {
					t.Errorf("bind %d's reason %q, want it to say %q", i, whys[min(i, len(whys)-1)], w)
				}
			}
			wantPath := "PATH=" + strings.Join(append(tt.wantPath, SystemPath), ":")
			if plan.Env[0] != wantPath {
				t.Errorf("%s, want %s", plan.Env[0], wantPath)
			}
		})
	}
}

func TestCommandClosureRefuses(t *testing.T) {
	tests := []struct {
		name  string
		setup func(tree)
		argv  string
		code  string
		want  []string // the error names these
	}{
		{
			name:  "a program directly in the home",
			setup: func(t tree) { t.program("tool", "/home/ana/tool") },
			argv:  "tool", code: CodeHome,
			want: []string{"/home/ana", "is the home directory /home/ana", "~/.local/opt/NAME/bin", "--accept home-directory-mounted"},
		},
		{
			name:  "a program in a credential directory",
			setup: func(t tree) { t.program("tool", "/home/ana/.ssh/bin/tool") },
			argv:  "tool", code: CodeHome,
			want: []string{"/home/ana/.ssh/bin", "holds credentials", "out of the credential directory"},
		},
		{
			name: "a symlink chain into ~/.config's credentials",
			setup: func(t tree) {
				t.bin("/home/ana/.config/gh/bin/gh-tool")
				t.link("/srv/bin/tool", "/home/ana/.config/gh/bin/gh-tool")
				t.onPath("tool", "/srv/bin/tool")
			},
			argv: "tool", code: CodeHome,
			want: []string{"/home/ana/.config/gh/bin", "holds credentials"},
		},
		{
			name:  "a system directory the sandbox does not see",
			setup: func(t tree) { t.program("tool", "/var/lib/tool/bin/tool") },
			argv:  "tool", code: CodeSystem,
			want: []string{"/var/lib/tool/bin", "system directory /var", "/usr/local or /opt"},
		},
		{
			name: "an interpreter in the home",
			setup: func(t tree) {
				t.script("/srv/tools/bin/run", "#!/home/ana/python\n")
				t.bin("/home/ana/python")
				t.onPath("run", "/srv/tools/bin/run")
			},
			argv: "run", code: CodeHome,
			want: []string{"the interpreter /home/ana/python of /srv/tools/bin/run's #! line", "is the home directory"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := resolve(t, Policy{}, []string{tt.argv}, func(f *fakeFS, h *Host) {
				h.EUID, h.Home = 1000, "/home/ana"
				tt.setup(tree{f, 1000})
			})
			var pr *PathRefusal
			if !errors.As(err, &pr) || pr.Code != tt.code {
				t.Fatalf("err = %v, want a %s refusal", err, tt.code)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

// An accepted finding lets the closure bind the narrowest path anyway.
func TestCommandClosureAccepted(t *testing.T) {
	plan, err := resolve(t, Policy{Accept: []Acceptance{{Code: CodeSystem, Subject: "/var/lib/tool", Reason: "vendor install"}}}, []string{"tool"}, func(f *fakeFS, h *Host) {
		tree{f, 0}.program("tool", "/var/lib/tool/bin/tool")
	})
	if err != nil {
		t.Fatal(err)
	}
	if ms := mountsOf(plan, KindInstall); len(ms) != 1 || ms[0].Source != "/var/lib/tool" {
		t.Errorf("install binds %+v, want /var/lib/tool", ms)
	}
}

func TestCommandClosureInterpreterDepth(t *testing.T) {
	_, err := resolve(t, Policy{}, []string{"a"}, func(f *fakeFS, h *Host) {
		tr := tree{f, 0}
		for _, n := range []string{"a", "b", "c", "d", "e"} {
			next := string(rune(n[0] + 1))
			tr.script("/srv/chain/"+n, "#!/srv/chain/"+next+"\n")
		}
		tr.bin("/srv/chain/f")
		tr.onPath("a", "/srv/chain/a")
	})
	var in *InputError
	if !errors.As(err, &in) || !strings.Contains(err.Error(), "more than 4 interpreters deep") {
		t.Errorf("err = %v, want the depth refused", err)
	}
}

func TestCommandClosureUnreadable(t *testing.T) {
	// A file this user cannot read binds what its path needs and no
	// interpreter: the sandbox could not run it either.
	plan, err := resolve(t, Policy{}, []string{"tool"}, func(f *fakeFS, h *Host) {
		tree{f, 0}.program("tool", "/srv/tools/bin/tool")
		f.files["/srv/tools/bin/tool"] = FileInfo{Mode: fs.ModeNamedPipe | 0o755}
	})
	if err != nil {
		t.Fatal(err)
	}
	if ms := mountsOf(plan, KindInstall); len(ms) != 1 || ms[0].Source != "/srv/tools" {
		t.Errorf("install binds %+v", ms)
	}
}

func TestParseShebang(t *testing.T) {
	tests := []struct {
		line, interp, name string
		ok                 bool
	}{
		{"#!/bin/sh\n", "/bin/sh", "", true},
		{"#! /usr/bin/python3 -u\n", "/usr/bin/python3", "", true},
		{"#!/usr/bin/env node\nrest", "/usr/bin/env", "node", true},
		{"#!/usr/bin/env\tnode  \r\n", "/usr/bin/env", "node", true},
		{"#!/usr/bin/env -S node --no-warnings\n", "/usr/bin/env", "node", true},
		{"#!/usr/bin/env -S -i PATH=/x deno run -A\n", "/usr/bin/env", "deno", true},
		{"#!/usr/bin/env --split-string=bun run\n", "/usr/bin/env", "bun", true},
		{"#!/usr/bin/env -S -C /tmp python3\n", "/usr/bin/env", "python3", true},
		{"#!/usr/bin/env\n", "/usr/bin/env", "", true},
		{"#!\n", "", "", false},
		{"\x7fELF\x02\x01", "", "", false},
		{"", "", "", false},
	}
	for _, tt := range tests {
		interp, name, ok := parseShebang([]byte(tt.line))
		if interp != tt.interp || name != tt.name || ok != tt.ok {
			t.Errorf("parseShebang(%q) = %q, %q, %v; want %q, %q, %v", tt.line, interp, name, ok, tt.interp, tt.name, tt.ok)
		}
	}
}
