package account

import (
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The listings are shaped as macOS's ls -led prints them (the stock home's
// "group:everyone deny delete" entry, an entry chmod +a added, an
// inherited one); none was captured on a Mac by these tests.
func TestParseLsACL(t *testing.T) {
	data, err := os.ReadFile("testdata/ls-led-home.txt")
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseLsACL(string(data))
	if err != nil {
		t.Fatal(err)
	}
	want := []ExtACE{
		{Tag: "group", Name: "everyone", Deny: true, Rights: []string{"delete"}},
		{Tag: "user", Name: "_agentbox", Rights: []string{"list", "search", "readattr", "readextattr", "readsecurity"}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("ParseLsACL (-want +got):\n%s", d)
	}
	inh, err := ParseLsACL("-rw-r--r--+ 1 alice  staff  3 Nov 30 09:12 /Users/alice/src/a b.txt\n 0: user:_agentbox inherited allow read,write,append,file_inherit,directory_inherit\n")
	if err != nil || len(inh) != 1 || !inh[0].Inherited || inh[0].Name != "_agentbox" || inh[0].Deny {
		t.Errorf("inherited entry = %+v, %v", inh, err)
	}
	if none, err := ParseLsACL("drwx------  14 alice  staff  448 Nov 30 09:12 /Users/alice\n"); err != nil || none != nil {
		t.Errorf("no ACL = %v, %v; want nil, nil", none, err)
	}
	for _, bad := range []string{
		"",
		"drwx------+ 14 alice staff 448 Nov 30 09:12 /Users/alice\n",                                                      // + without entries
		"drwx------  14 alice staff 448 Nov 30 09:12 /Users/alice\n 0: user:x allow read\n",                               // entries without +
		"drwx------+ 14 alice staff 448 Nov 30 09:12 /Users/alice\n 0: ABCDEFAB-CDEF-ABCD-EFAB-CDEF00000001 allow read\n", // unresolved UUID
		"drwx------+ 14 alice staff 448 Nov 30 09:12 /Users/alice\n 1: user:x allow read\n",                               // out of order
		"drwx------+ 14 alice staff 448 Nov 30 09:12 /Users/alice\n 0: user:x permit read\n",
	} {
		if _, err := ParseLsACL(bad); !errors.Is(err, ErrBadExtACL) {
			t.Errorf("ParseLsACL(%q) = %v, want ErrBadExtACL", bad, err)
		}
	}
}

func TestExtACLAllowed(t *testing.T) {
	agent := Account{Name: "_agentbox", UID: 451, GID: 451, Groups: []Group{{Name: "everyone", GID: 12}, {Name: "localaccounts", GID: 61}, {Name: "_agentbox", GID: 451, Primary: true}}}
	home := func(mode fs.FileMode, ext ...string) Meta {
		m := Meta{UID: 501, GID: 20, Mode: fs.ModeDir | mode}
		for _, e := range ext {
			ace, err := parseACE(e)
			if err != nil {
				t.Fatal(err)
			}
			m.Ext = append(m.Ext, ace)
		}
		return m
	}
	for _, tc := range []struct {
		name      string
		m         Meta
		want      Perm
		ok, undec bool
		why       string
	}{
		{"mode 0700, stock deny delete", home(0o700, "group:everyone deny delete"), Read | Exec, false, false, "other (mode 0700) lacks r-x"},
		{"named allow list,search", home(0o700, "user:_agentbox allow list,search"), Read | Exec, true, false, "ACL user:_agentbox allow list,search"},
		{"allow search only, mode gives read", home(0o704, "user:_agentbox allow search"), Read | Exec, true, false, "then other"},
		{"allow search only, mode lacks read", home(0o700, "user:_agentbox allow search"), Read | Exec, false, false, "lacks r--"},
		{"deny wins over the mode", home(0o755, "group:everyone deny list"), Read | Exec, false, false, "denies r--"},
		{"deny after allow comes too late", home(0o700, "user:_agentbox allow list,search", "group:everyone deny list"), Read, true, false, "allow"},
		{"group by name", home(0o700, "group:localaccounts allow list,search"), Read | Exec, true, false, "group:localaccounts"},
		{"another group", home(0o700, "group:admin allow list,search"), Read | Exec, false, false, "other (mode 0700)"},
		{"inherit-only skipped", home(0o700, "user:_agentbox allow list,search,only_inherit"), Read | Exec, false, false, "other"},
		{"another user", home(0o700, "user:bob allow list,search"), Read, false, false, "other"},
	} {
		g := Allowed(agent, tc.m, tc.want)
		if g.OK != tc.ok || g.Undecided != tc.undec || !strings.Contains(g.Why, tc.why) {
			t.Errorf("%s: Allowed = %+v, want ok=%v undecided=%v why ~ %q", tc.name, g, tc.ok, tc.undec, tc.why)
		}
	}
	unnamed := agent
	unnamed.Groups = []Group{{GID: 451, Primary: true}}
	if g := Allowed(unnamed, home(0o700, "group:staff allow list"), Read); g.OK || !g.Undecided {
		t.Errorf("a group entry with unnamed groups = %+v, want undecided", g)
	}
	if g := Allowed(unnamed, home(0o700, "user:_agentbox allow list"), Read); !g.OK {
		t.Errorf("a user entry needs no group names: %+v", g)
	}
}

// TestReachUnknownOnUndecidedACL: an ACL the account's facts cannot decide
// makes Reach Unknown, which the launcher refuses, never No.
func TestReachUnknownOnUndecidedACL(t *testing.T) {
	a := Account{Name: "_agentbox", UID: 451, GID: 451, Groups: []Group{{GID: 451, Primary: true}}}
	ace, _ := parseACE("group:staff allow list,search")
	fsys := fakeFS{meta: map[string]Meta{
		"/":            {UID: 0, Mode: fs.ModeDir | 0o755},
		"/Users":       {UID: 0, Mode: fs.ModeDir | 0o755},
		"/Users/alice": {UID: 501, GID: 20, Mode: fs.ModeDir | 0o700, Ext: []ExtACE{ace}},
	}}
	if acc := Reach(fsys, a, "/Users/alice", Read); acc.Allowed != Unknown {
		t.Errorf("Reach = %+v, want unknown", acc)
	}
}

func TestNameGroups(t *testing.T) {
	a, err := ParseDSCLRead("_agentbox", "NFSHomeDirectory: /h\nPrimaryGroupID: 451\nUniqueID: 451\n", "451 12 61")
	if err != nil {
		t.Fatal(err)
	}
	got, err := NameGroups(a, "451 12 61\n", "_agentbox everyone localaccounts\n")
	if err != nil {
		t.Fatal(err)
	}
	want := []Group{{Name: "everyone", GID: 12}, {Name: "localaccounts", GID: 61}, {Name: "_agentbox", GID: 451, Primary: true}}
	if d := cmp.Diff(want, got.Groups); d != "" {
		t.Errorf("NameGroups (-want +got):\n%s", d)
	}
	if _, err := NameGroups(a, "451 12", "_agentbox"); err == nil {
		t.Error("NameGroups accepted lists of two lengths")
	}
	if d := cmp.Diff([]string{"/usr/bin/id", "-Gn", "_agentbox"}, DarwinGroupNamesArgv(DarwinName)); d != "" {
		t.Error(d)
	}
	if d := cmp.Diff([]string{"/bin/ls", "-led", "/Users/alice"}, LsACLArgv("/Users/alice")); d != "" {
		t.Error(d)
	}
}
