package workspace

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// tree writes files (path → content; a content of "->T" makes a symlink
// to T, "/" a directory) below a fresh directory.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, c := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		switch {
		case c == "/":
			err = os.MkdirAll(full, 0o755)
		case strings.HasPrefix(c, "->"):
			err = os.Symlink(c[2:], full)
		default:
			err = os.WriteFile(full, []byte(c), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func repo(extra map[string]string) map[string]string {
	m := map[string]string{
		".git/HEAD": "ref: refs/heads/main\n", ".git/config": "[core]\n\tbare = false\n",
		".git/objects/": "/", ".git/hooks/pre-commit.sample": "#!/bin/sh\n", "src/main.go": "package main\n",
	}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

func inspect(t *testing.T, root string) *Snapshot {
	t.Helper()
	s, err := Inspect(root, DefaultProtectPaths(), DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// write changes the tree after the launch snapshot, as the agent would.
func write(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(c, "->") {
			if err := os.Symlink(c[2:], full); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestChanges(t *testing.T) {
	tests := []struct {
		name   string
		before map[string]string
		agent  map[string]string
		want   []Leftover
	}{
		{
			name:   "fsmonitor appended to .git/config",
			before: repo(nil),
			agent:  map[string]string{".git/config": "[core]\n\tbare = false\n\tfsmonitor = touch /tmp/pwned\n"},
			want:   []Leftover{{Path: ".git/config", Kind: KindGitConfig, Change: "changed", Key: "core.fsmonitor", Value: "touch /tmp/pwned"}},
		},
		{
			name:   "a new repository's config",
			before: map[string]string{"src/a": "x"},
			agent:  map[string]string{"sub/.git/HEAD": "x", "sub/.git/config": "[core]\nsshCommand = sh -c x\n"},
			want:   []Leftover{{Path: "sub/.git/config", Kind: KindGitConfig, Change: "created", Key: "core.sshcommand", Value: "sh -c x"}},
		},
		{
			name:   "an unchanged executable key is not listed",
			before: repo(map[string]string{".git/config": "[core]\npager = less\n"}),
			agent:  map[string]string{".git/config": "[core]\npager = less\n[user]\nname = x\n"},
			want:   nil,
		},
		{
			name:   "hooks, not samples",
			before: repo(nil),
			agent:  map[string]string{".git/hooks/post-checkout": "#!/bin/sh\nx\n", ".git/hooks/x.sample": "y"},
			want:   []Leftover{{Path: ".git/hooks/post-checkout", Kind: KindHook, Change: "created"}},
		},
		{
			name:   "a hook changed",
			before: repo(map[string]string{".git/hooks/pre-push": "a"}),
			agent:  map[string]string{".git/hooks/pre-push": "b"},
			want:   []Leftover{{Path: ".git/hooks/pre-push", Kind: KindHook, Change: "changed"}},
		},
		{
			name:   "a worktree's config and a submodule's",
			before: repo(map[string]string{".git/worktrees/wt/HEAD": "x", ".git/modules/m/HEAD": "x", ".git/modules/m/objects/": "/", ".git/modules/m/config": ""}),
			agent: map[string]string{
				".git/worktrees/wt/config.worktree": "[core]\nhooksPath = /tmp/h\n",
				".git/modules/m/config":             "[filter \"f\"]\nsmudge = x\n",
			},
			want: []Leftover{
				{Path: ".git/modules/m/config", Kind: KindGitConfig, Change: "changed", Key: "filter.f.smudge", Value: "x"},
				{Path: ".git/worktrees/wt/config.worktree", Kind: KindGitConfig, Change: "created", Key: "core.hookspath", Value: "/tmp/h"},
			},
		},
		{
			name:   "a bare repository anywhere",
			before: map[string]string{"x/HEAD": "x", "x/objects/": "/", "x/config": ""},
			agent:  map[string]string{"x/config": "[credential]\nhelper = !cat /etc/shadow\n"},
			want:   []Leftover{{Path: "x/config", Kind: KindGitConfig, Change: "changed", Key: "credential.helper", Value: "!cat /etc/shadow"}},
		},
		{
			name:   "a worktree gitdir outside .git, where a .git file points",
			before: map[string]string{"wt/HEAD": "x", "wt/commondir": "../.git"},
			agent:  map[string]string{"wt/config.worktree": "[core]\npager = x\n"},
			want:   []Leftover{{Path: "wt/config.worktree", Kind: KindGitConfig, Change: "created", Key: "core.pager", Value: "x"}},
		},
		{
			name:   "a gitdir file",
			before: map[string]string{"a": "x"},
			agent:  map[string]string{"w/.git": "gitdir: ../evil\n"},
			want:   []Leftover{{Path: "w/.git", Kind: KindGitFile, Change: "created"}},
		},
		{
			name:   "envrc, tasks.json, devcontainer",
			before: map[string]string{"a": "x"},
			agent:  map[string]string{".envrc": "x", ".vscode/tasks.json": "{}", ".vscode/other.json": "{}", ".devcontainer/devcontainer.json": "{}", "d/.devcontainer.json": "{}"},
			want: []Leftover{
				{Path: ".devcontainer/devcontainer.json", Kind: KindDevcontainer, Change: "created"},
				{Path: ".envrc", Kind: KindEnvrc, Change: "created"},
				{Path: ".vscode/tasks.json", Kind: KindVSCodeTasks, Change: "created"},
				{Path: "d/.devcontainer.json", Kind: KindDevcontainer, Change: "created"},
			},
		},
		{
			name:   "a symlinked config is named, not followed",
			before: repo(nil),
			agent:  map[string]string{"evil": "[core]\nfsmonitor = x\n", "r/.git/HEAD": "x", "r/.git/config": "->../../evil"},
			want:   []Leftover{{Path: "r/.git/config", Kind: KindGitConfig, Change: "created"}},
		},
		{
			name:   "a protected path created during the run",
			before: map[string]string{"a": "x"},
			agent:  map[string]string{"agentbox.yaml": "runtime: /x\n"},
			want:   []Leftover{{Path: "agentbox.yaml", Kind: KindProtected, Change: "created"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := tree(t, tt.before)
			before := inspect(t, root)
			write(t, root, tt.agent)
			got := Changes(before, inspect(t, root))
			for i := range got {
				got[i].Detail = "" // words; checked below
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Changes (-want +got):\n%s", diff)
			}
		})
	}
}

func TestChangesSaysWhatRuns(t *testing.T) {
	root := tree(t, repo(nil))
	before := inspect(t, root)
	write(t, root, map[string]string{"r/.git/HEAD": "x", "r/.git/config": "->/etc/passwd"})
	got := Changes(before, inspect(t, root))
	if len(got) != 1 || got[0].Detail != "a symlink to /etc/passwd; host tools follow it" {
		t.Errorf("got %+v", got)
	}
}

func TestInspectSockets(t *testing.T) {
	root := tree(t, repo(map[string]string{"run/": "/"}))
	for _, p := range []string{"run/nvim.sock", ".git/fsmonitor--daemon.ipc"} {
		l, err := net.Listen("unix", filepath.Join(root, p))
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
	}
	s := inspect(t, root)
	if diff := cmp.Diff([]string{".git/fsmonitor--daemon.ipc", "run/nvim.sock"}, s.Sockets); diff != "" {
		t.Errorf("sockets (-want +got):\n%s", diff)
	}
}

func TestInspectBounds(t *testing.T) {
	files := map[string]string{}
	for _, d := range []string{"a", "b", "c"} {
		files[d+"/f"] = "x"
	}
	root := tree(t, files)
	s, err := Inspect(root, nil, Limits{MaxEntries: 4, MaxDepth: 64, MaxFileBytes: 16, MaxSockets: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Capped) == 0 || !strings.Contains(s.Capped[0], "stopped at 4 entries") {
		t.Errorf("capped %q, want the entry bound named", s.Capped)
	}
	deep := tree(t, map[string]string{"1/2/3/4/.envrc": "x"})
	s, err = Inspect(deep, nil, Limits{MaxEntries: 100, MaxDepth: 2, MaxFileBytes: 16, MaxSockets: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Items["1/2/3/4/.envrc"]; ok || len(s.Capped) == 0 || !strings.Contains(s.Capped[0], "deeper than 2 levels") {
		t.Errorf("depth bound: items %v, capped %q", s.Items, s.Capped)
	}
	for i := 0; i < 3; i++ {
		l, err := net.Listen("unix", filepath.Join(deep, "s"+string(rune('0'+i))))
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
	}
	s, _ = Inspect(deep, nil, Limits{MaxEntries: 100, MaxDepth: 64, MaxFileBytes: 16, MaxSockets: 2})
	if len(s.Sockets) != 2 || !s.SocketsCapped {
		t.Errorf("sockets %v capped %v, want 2 and capped", s.Sockets, s.SocketsCapped)
	}
}

// A FIFO, a symlinked directory and a long file never block, escape or
// grow the walk.
func TestInspectHostileTree(t *testing.T) {
	outside := tree(t, map[string]string{".envrc": "outside"})
	root := tree(t, map[string]string{"link/": "->" + outside, "big/.envrc": strings.Repeat("x", 64)})
	if err := syscall.Mkfifo(filepath.Join(root, ".envrc"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Inspect(root, nil, Limits{MaxEntries: 100, MaxDepth: 8, MaxFileBytes: 16, MaxSockets: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Items["link/.envrc"]; ok {
		t.Error("the walk followed a symlinked directory")
	}
	if st := s.Items[".envrc"].State; st != "fifo" {
		t.Errorf("fifo state %q", st)
	}
	if st := s.Items["big/.envrc"].State; !strings.HasSuffix(st, "+truncated") {
		t.Errorf("long file state %q, want truncated", st)
	}
}

func TestProtectedState(t *testing.T) {
	root := tree(t, map[string]string{
		"a/.git/config": "x", "b/.git": "gitdir: x", "c/.git": "->../a/.git", "d/": "/",
	})
	for p, want := range map[string]string{
		"a/.git/config": "sha256:2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881",
		"b/.git/config": "through-file", "c/.git/config": "through-symlink", "d/.git/config": "absent",
		"c/.git": "symlink:../a/.git", "a/.git": "directory",
	} {
		s, err := Inspect(root, []string{p}, DefaultLimits)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Protected[p].State; got != want {
			t.Errorf("%s: state %q, want %q", p, got, want)
		}
	}
}
