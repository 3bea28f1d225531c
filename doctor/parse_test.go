package doctor

import (
	"testing"

	"github.com/agentbox/agentbox/userns"
)

func TestParseRuntimeVersion(t *testing.T) {
	for out, want := range map[string]string{
		"runc version 1.1.5+ds1\ncommit: 1.1.5+ds1-1+deb12u1\nspec: 1.0.2-dev\n": "1.1.5+ds1",
		"crun version 1.8.1\ncommit: f8a096be\nrundir: /run/crun\n":              "1.8.1",
		"runsc version release-20240513.0\nspec: 1.1.0-rc.1\n":                   "release-20240513.0",
		"podman version 5.6.2\n": "5.6.2",
		"":                       "",
		"usage: runc [options]":  "",
	} {
		if got := parseRuntimeVersion(out); got != want {
			t.Errorf("parseRuntimeVersion(%q) = %q, want %q", out, got, want)
		}
	}
}

func TestKernelVersion(t *testing.T) {
	for rel, want := range map[string][2]int{
		"6.1.0-28-amd64": {6, 1}, "5.13.0": {5, 13}, "6.18.44-fc-v669": {6, 18}, "4.19.0+": {4, 19}, "5.10": {5, 10},
	} {
		maj, min, ok := kernelVersion(rel)
		if !ok || maj != want[0] || min != want[1] {
			t.Errorf("kernelVersion(%q) = %d.%d %v", rel, maj, min, ok)
		}
	}
	if _, _, ok := kernelVersion("linux"); ok {
		t.Error("kernelVersion accepted \"linux\"")
	}
}

func TestParseOSRelease(t *testing.T) {
	got := parseOSRelease([]byte("PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nVERSION_ID=\"12\"\nVERSION_CODENAME=bookworm\nID=debian\n# comment\n"))
	want := OSRelease{ID: "debian", VersionID: "12", Codename: "bookworm", Pretty: "Debian GNU/Linux 12 (bookworm)"}
	if got != want {
		t.Errorf("%+v, want %+v", got, want)
	}
}

func TestFreeStart(t *testing.T) {
	if got := freeStart(nil); got != 100000 {
		t.Errorf("empty: %d", got)
	}
	if got := freeStart(idEntries(100000, 65536)); got != 196608 {
		t.Errorf("after 100000+65536: %d", got)
	}
}

func idEntries(start, count uint32) []userns.SubIDEntry {
	return []userns.SubIDEntry{{Owner: "ana", Start: start, Count: count}}
}
