package account

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseDSCLRead(t *testing.T) {
	out := "NFSHomeDirectory: /Users/Shared/agentbox/home\nPrimaryGroupID: 451\nUniqueID: 451\nUserShell:\n /usr/bin/false\n"
	got, err := ParseDSCLRead("_agentbox", out, "451 12 61\n")
	if err != nil {
		t.Fatal(err)
	}
	want := Account{
		Name: "_agentbox", UID: 451, GID: 451, Home: "/Users/Shared/agentbox/home", Shell: "/usr/bin/false",
		Groups: []Group{{GID: 12}, {GID: 61}, {GID: 451, Primary: true}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("ParseDSCLRead (-want +got):\n%s", d)
	}
	for _, bad := range []string{"PrimaryGroupID: 451\nNFSHomeDirectory: /h\n", "UniqueID: x\nPrimaryGroupID: 1\nNFSHomeDirectory: /h\n", "UniqueID: 1\nPrimaryGroupID: 1\n"} {
		if _, err := ParseDSCLRead("_agentbox", bad, ""); err == nil {
			t.Errorf("ParseDSCLRead(%q) accepted it", bad)
		}
	}
	if _, err := ParseDSCLRead("_agentbox", out, "451 x"); err == nil {
		t.Error("ParseDSCLRead accepted a gid that is no number")
	}
}

func TestDarwinLookupArgv(t *testing.T) {
	if d := cmp.Diff([]string{"/usr/bin/dscl", ".", "-read", "/Users/_agentbox", "UniqueID", "PrimaryGroupID", "NFSHomeDirectory", "UserShell"}, DarwinReadArgv(DarwinName)); d != "" {
		t.Error(d)
	}
	if d := cmp.Diff([]string{"/usr/bin/id", "-G", "_agentbox"}, DarwinGroupsArgv(DarwinName)); d != "" {
		t.Error(d)
	}
}

// A value dscl wraps is joined from its indented lines, however many.
func TestParseDSCLAttrsJoinsWrappedValues(t *testing.T) {
	a := ParseDSCLAttrs("RealName:\n agentbox\n sandbox\nUniqueID: 451\nNFSHomeDirectory: /var/empty\n")
	if a["RealName"] != "agentbox sandbox" || a["UniqueID"] != "451" || a["NFSHomeDirectory"] != "/var/empty" {
		t.Errorf("ParseDSCLAttrs = %q", a)
	}
}
