package engine

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

var cmpACL = cmp.AllowUnexported(aclEntry{})

func TestWithUserRecomputesMask(t *testing.T) {
	minimal := []aclEntry{{aclUserObj, 7, aclNoID}, {aclGroupObj, 5, aclNoID}, {aclOther, 5, aclNoID}}
	got := withUser(minimal, 101000, 7)
	want := []aclEntry{{aclUserObj, 7, aclNoID}, {aclGroupObj, 5, aclNoID}, {aclOther, 5, aclNoID}, {aclUser, 7, 101000}, {aclMask, 7, aclNoID}}
	if d := cmp.Diff(want, got, cmpACL); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	// Granting twice replaces the entry instead of adding a second one.
	again := withUser(got, 101000, 6)
	users := 0
	for _, e := range again {
		if e.tag == aclUser {
			users++
		}
	}
	if users != 1 {
		t.Errorf("two entries for one uid: %v", again)
	}
}

func TestParseAndWriteRoundTrip(t *testing.T) {
	raw := []byte{2, 0, 0, 0, 1, 0, 7, 0, 0xff, 0xff, 0xff, 0xff, 2, 0, 6, 0, 0xe8, 0x8a, 0x01, 0, 4, 0, 5, 0, 0xff, 0xff, 0xff, 0xff}
	acl, err := parseACL(raw)
	if err != nil {
		t.Fatal(err)
	}
	want := []aclEntry{{aclUserObj, 7, aclNoID}, {aclUser, 6, 101096}, {aclGroupObj, 5, aclNoID}}
	if d := cmp.Diff(want, acl, cmpACL); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	for _, bad := range [][]byte{nil, {1, 0, 0, 0}, {2, 0, 0, 0, 1}} {
		if _, err := parseACL(bad); err == nil {
			t.Errorf("parseACL(%v) accepted", bad)
		}
	}
}

func TestMinimal(t *testing.T) {
	if !minimal([]aclEntry{{aclUserObj, 7, aclNoID}, {aclGroupObj, 5, aclNoID}, {aclMask, 7, aclNoID}, {aclOther, 5, aclNoID}}) {
		t.Error("owner/group/mask/other is minimal")
	}
	if minimal([]aclEntry{{aclUser, 7, 5}}) {
		t.Error("a named user is not minimal")
	}
}
