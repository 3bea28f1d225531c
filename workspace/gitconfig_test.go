package workspace

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseConfig(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []Key
	}{
		{"plain", "[core]\n\tfsmonitor = touch /tmp/x\n", []Key{{"core.fsmonitor", "touch /tmp/x"}}},
		{"case folded", "[CoRe]\n\tFSMonitor=x\n", []Key{{"core.fsmonitor", "x"}}},
		{"subsection keeps case", "[filter \"LFS\"]\n\tclean = git-lfs clean -- %f\n", []Key{{"filter.LFS.clean", "git-lfs clean -- %f"}}},
		{"old subsection form", "[branch.Main]\nremote = origin\n", []Key{{"branch.main.remote", "origin"}}},
		{"entry on the header line", "[core] pager = less -R\n", []Key{{"core.pager", "less -R"}}},
		{"two sections on one line", "[a] x = 1\n[core]editor=vi", []Key{{"a.x", "1"}, {"core.editor", "vi"}}},
		{"comments", "# c\n; c\n[core] ; c\n pager = less # trailing\n", []Key{{"core.pager", "less"}}},
		{"quoted value keeps spaces and comment chars", "[core]\npager = \"  a # b ; c  \"\n", []Key{{"core.pager", "  a # b ; c  "}}},
		{"escapes", "[core]\npager = a\\tb\\\"c\\\\d\n", []Key{{"core.pager", "a\tb\"c\\d"}}},
		{"continuation", "[core]\nfsmonitor = touch \\\n/tmp/x\n", []Key{{"core.fsmonitor", "touch /tmp/x"}}},
		{"inner spaces kept, trailing dropped", "[core]\npager = a   b   \n", []Key{{"core.pager", "a   b"}}},
		{"bare name is true", "[core]\nbare\n", []Key{{"core.bare", ""}}},
		{"BOM", "\xef\xbb\xbf[core]\nfsmonitor=x\n", []Key{{"core.fsmonitor", "x"}}},
		{"CRLF", "[core]\r\nfsmonitor = x\r\n", []Key{{"core.fsmonitor", "x"}}},
		{"malformed line skipped", "[core]\n!!!\nfsmonitor = x\n", []Key{{"core.fsmonitor", "x"}}},
		{"malformed header skipped", "[core\nfsmonitor = x\n[core]\nsshCommand = y\n", []Key{{"core.sshcommand", "y"}}},
		{"key before any section ignored", "fsmonitor = x\n", nil},
		{"subsection escapes", "[includeIf \"gitdir:~/a\\\"b/\"]\npath = x\n", []Key{{"includeif.gitdir:~/a\"b/.path", "x"}}},
		{"no final newline", "[core]\nfsmonitor = x", []Key{{"core.fsmonitor", "x"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, ParseConfig([]byte(tt.in))); diff != "" {
				t.Errorf("ParseConfig(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestExecKeys(t *testing.T) {
	tests := []struct {
		key, value string
		exec       bool
	}{
		{"core.fsmonitor", "x", true},
		{"core.hookspath", "x", true},
		{"core.sshcommand", "x", true},
		{"core.pager", "x", true},
		{"core.editor", "x", true},
		{"core.askpass", "x", true},
		{"core.bare", "", false},
		{"core.autocrlf", "true", false},
		{"filter.lfs.clean", "x", true},
		{"filter.lfs.smudge", "x", true},
		{"filter.lfs.process", "x", true},
		{"filter.lfs.required", "true", false},
		{"filter.clean", "x", false},
		{"diff.pdf.textconv", "x", true},
		{"diff.pdf.command", "x", true},
		{"diff.external", "x", true},
		{"diff.renames", "true", false},
		{"merge.ours.driver", "x", true},
		{"credential.helper", "store", true},
		{"credential.https://example.com.helper", "x", true},
		{"credential.username", "ana", false},
		{"gpg.program", "x", true},
		{"gpg.ssh.program", "x", true},
		{"sequence.editor", "x", true},
		{"include.path", "../x", true},
		{"includeif.gitdir:~/w/.path", "x", true},
		{"pager.log", "x", true},
		{"alias.st", "status", false},
		{"alias.pwn", "!sh -c x", true},
		{"alias.pwn", "  !sh", true},
		{"submodule.a.update", "checkout", false},
		{"submodule.a.update", "!x", true},
		{"remote.origin.uploadpack", "x", true},
		{"remote.origin.url", "x", false},
		{"difftool.x.cmd", "x", true},
		{"user.name", "x", false},
	}
	for _, tt := range tests {
		k := Key{tt.key, tt.value}
		if got := len(ExecKeys([]Key{k})) == 1; got != tt.exec {
			t.Errorf("%s = %q: executable %v, want %v", tt.key, tt.value, got, tt.exec)
		}
	}
}
