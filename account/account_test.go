package account

import (
	"errors"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

var abx = Account{Name: "abx", UID: 1001, GID: 1001, Groups: []Group{{Name: "abx", GID: 1001, Primary: true}, {Name: "docker", GID: 105}}}

func TestACLRoundTrip(t *testing.T) {
	es := []ACLEntry{{Tag: TagUserObj, Perm: 7}, {Tag: TagUser, Perm: Read | Exec, ID: 1001}, {Tag: TagGroupObj, Perm: 5}, {Tag: TagMask, Perm: 5}, {Tag: TagOther}}
	got, err := ParseACL(EncodeACL(es))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(es, got); d != "" {
		t.Errorf("round trip (-want +got):\n%s", d)
	}
	for _, bad := range [][]byte{nil, {1, 0, 0, 0}, {2, 0, 0, 0, 1}} {
		if _, err := ParseACL(bad); !errors.Is(err, ErrBadACL) {
			t.Errorf("ParseACL(%v) = %v, want ErrBadACL", bad, err)
		}
	}
}

func TestAllowed(t *testing.T) {
	acl := func(es ...ACLEntry) []ACLEntry {
		return append([]ACLEntry{{Tag: TagUserObj, Perm: 7}, {Tag: TagGroupObj}, {Tag: TagOther}}, es...)
	}
	for _, tc := range []struct {
		name string
		m    Meta
		want Perm
		ok   bool
		why  string
	}{
		{"other read", Meta{UID: 1000, GID: 1000, Mode: 0o644}, Read, true, "other (mode 0644)"},
		{"private", Meta{UID: 1000, GID: 1000, Mode: 0o600}, Read, false, "other (mode 0600) lacks r--"},
		{"group", Meta{UID: 1000, GID: 105, Mode: 0o640}, Read, true, "group docker (mode 0640)"},
		{"group bits deny even if other allows", Meta{UID: 1000, GID: 105, Mode: 0o604}, Read, false, "group docker (mode 0604) lacks r--"},
		{"owner", Meta{UID: 1001, GID: 1000, Mode: 0o400}, Read, true, "owner"},
		{"acl user", Meta{UID: 1000, GID: 1000, Mode: 0o750, ACL: acl(ACLEntry{Tag: TagUser, ID: 1001, Perm: 5}, ACLEntry{Tag: TagMask, Perm: 5})}, Read | Exec, true, "ACL user:1001:r-x"},
		{"acl user masked", Meta{UID: 1000, GID: 1000, Mode: 0o700, ACL: acl(ACLEntry{Tag: TagUser, ID: 1001, Perm: 5}, ACLEntry{Tag: TagMask, Perm: 0})}, Read, false, "ACL user:1001:r-x lacks r--"},
		{"acl group", Meta{UID: 1000, GID: 1000, Mode: 0o740, ACL: acl(ACLEntry{Tag: TagGroup, ID: 105, Perm: 4}, ACLEntry{Tag: TagMask, Perm: 4})}, Read, true, "ACL group:105:r-- (group docker)"},
		{"acl other", Meta{UID: 1000, GID: 1000, Mode: 0o700, ACL: acl()}, Read, false, "ACL other::--- lacks r--"},
	} {
		g := Allowed(abx, tc.m, tc.want)
		if g.OK != tc.ok || g.Why != tc.why {
			t.Errorf("%s: Allowed = %+v, want %v %q", tc.name, g, tc.ok, tc.why)
		}
	}
}

// fakeFS is a file tree of Meta by path, with symlink targets.
type fakeFS struct {
	meta  map[string]Meta
	links map[string]string
}

func (f fakeFS) Lstat(p string) (Meta, error) {
	if m, ok := f.meta[p]; ok {
		return m, nil
	}
	return Meta{}, fs.ErrNotExist
}

func (f fakeFS) Readlink(p string) (string, error) { return f.links[p], nil }

func TestReach(t *testing.T) {
	dir := func(mode fs.FileMode) Meta { return Meta{UID: 1000, GID: 1000, Mode: fs.ModeDir | mode} }
	f := fakeFS{meta: map[string]Meta{
		"/":                        {Mode: fs.ModeDir | 0o755},
		"/home":                    {Mode: fs.ModeDir | 0o755},
		"/home/ana":                dir(0o711),
		"/home/ana/.ssh":           dir(0o700),
		"/home/ana/.ssh/id_rsa":    {UID: 1000, Mode: 0o644},
		"/home/ana/notes":          {UID: 1000, Mode: 0o644},
		"/home/ana/link":           {Mode: fs.ModeSymlink | 0o777},
		"/home/ana/.aws":           {Mode: fs.ModeSymlink | 0o777},
		"/srv":                     {Mode: fs.ModeDir | 0o755},
		"/srv/aws":                 dir(0o755),
		"/srv/aws/credentials":     {UID: 1000, Mode: 0o644},
		"/home/ana/.aws/../../bob": {},
	}, links: map[string]string{"/home/ana/link": "notes", "/home/ana/.aws": "/srv/aws"}}
	for _, tc := range []struct {
		p, want, why string
		perm         Perm
	}{
		{"/home/ana", No, "other (mode 0711) lacks r--", Read},
		{"/home/ana", Yes, "other (mode 0711)", Exec},
		{"/home/ana/notes", Yes, "other (mode 0644)", Read},
		{"/home/ana/.ssh/id_rsa", No, "cannot search /home/ana/.ssh: other (mode 0700) lacks --x", Read},
		{"/home/ana/link", Yes, "other (mode 0644)", Read},
		{"/home/ana/.aws/credentials", Yes, "other (mode 0644)", Read},
		{"/home/ana/missing", No, "does not exist", Read},
	} {
		got := Reach(f, abx, tc.p, tc.perm)
		if got.Allowed != tc.want || got.Why != tc.why {
			t.Errorf("Reach(%s, %s) = %+v, want %s %q", tc.p, tc.perm, got, tc.want, tc.why)
		}
	}
}

func TestSudoRights(t *testing.T) {
	s := SudoRights(abx, "testdata/sudoers")
	if len(s.Errors) > 0 {
		t.Fatalf("errors: %v", s.Errors)
	}
	var got []string
	for _, r := range s.Rules {
		got = append(got, filepath.Base(r.File)+":"+itoa(r.Line)+" via "+r.Via+nopw(r.NoPasswd))
	}
	want := []string{
		"sudoers:7 via AGENTS",
		"sudoers:11 via #1001 NOPASSWD",
		"50-docker:1 via %docker NOPASSWD",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("rules (-want +got):\n%s", d)
	}
	if s := SudoRights(Account{Name: "zed", UID: 2000}, "testdata/sudoers"); len(s.Rules) != 1 || s.Rules[0].Via != "ALL" {
		t.Errorf("zed: %+v, want only the ALL rule", s.Rules)
	}
	if s := SudoRights(abx, "testdata/none"); len(s.Errors)+len(s.Rules) != 0 {
		t.Errorf("no sudoers (sudo not installed): %+v, want no rules and no errors", s)
	}
	writeFile(t, filepath.Join(t.TempDir(), "x"), "")
	bad := filepath.Join(t.TempDir(), "sudoers")
	writeFile(t, bad, "#include /nonexistent/file\n")
	if s := SudoRights(abx, bad); len(s.Errors) != 1 {
		t.Errorf("a missing included file: errors %v, want one", s.Errors)
	}
}

func TestSudoDefaultsNoAuthenticate(t *testing.T) {
	p := filepath.Join(t.TempDir(), "sudoers")
	writeFile(t, p, "Defaults:abx !authenticate\nabx ALL = /usr/bin/id\n")
	s := SudoRights(abx, p)
	if len(s.Rules) != 2 || !s.Rules[0].NoPasswd || !s.Rules[1].NoPasswd {
		t.Errorf("rules %+v: want the spec and the Defaults line, both without a password", s.Rules)
	}
	writeFile(t, p, "Defaults:abx !authenticate\n")
	if s := SudoRights(abx, p); len(s.Rules) != 0 {
		t.Errorf("a Defaults line alone grants nothing, got %+v", s.Rules)
	}
}

func nopw(b bool) string {
	if b {
		return " NOPASSWD"
	}
	return ""
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestParseAssignments(t *testing.T) {
	for _, tc := range []struct {
		syntax, text string
		want         []string
	}{
		{syntaxShell, "# c\nexport GITHUB_TOKEN=\"ghp_x y\"\nFOO=bar; baz\ndeclare -x A='q'\nalias x=y\nsetenv B c\n", []string{"GITHUB_TOKEN=ghp_x y@2", "FOO=bar@3", "A=q@4", "B=c@6"}},
		{syntaxFish, "set -gx OPENAI_API_KEY sk-1\nset -l LOCAL 1\nset --export E v\n", []string{"OPENAI_API_KEY=sk-1@1", "E=v@3"}},
		{syntaxEnvD, "PATH=/usr/bin\nTOKEN=t\n", []string{"PATH=/usr/bin@1", "TOKEN=t@2"}},
		{syntaxPAMEnv, "HF_TOKEN DEFAULT=hf_1\nX=y\n", []string{"HF_TOKEN=hf_1@1", "X=y@2"}},
	} {
		as, err := ParseAssignments("f", tc.syntax, strings.NewReader(tc.text))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, a := range as {
			got = append(got, a.Name+"="+a.Value+"@"+itoa(a.Line))
		}
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", tc.syntax, d)
		}
	}
}

func writeFile(t *testing.T, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}
