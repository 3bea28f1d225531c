package userns

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseSubIDs(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []SubIDEntry
		errLine int // 0: no error
	}{
		{name: "empty", in: ""},
		{
			name: "entries comments blanks",
			in:   "# comment\n\nana:100000:65536\n1001:165536:65536\n",
			want: []SubIDEntry{{"ana", 100000, 65536}, {"1001", 165536, 65536}},
		},
		{name: "spaces trimmed", in: "  ana:1:2  \n", want: []SubIDEntry{{"ana", 1, 2}}},
		{name: "top of id space", in: "ana:4294901759:65536\n", want: []SubIDEntry{{"ana", 4294901759, 65536}}},
		{name: "too few fields", in: "ana:100000:65536\nbob:1\n", errLine: 2},
		{name: "too many fields", in: "ana:1:2:3\n", errLine: 1},
		{name: "empty owner", in: ":1:2\n", errLine: 1},
		{name: "bad start", in: "ana:x:2\n", errLine: 1},
		{name: "negative start", in: "ana:-1:2\n", errLine: 1},
		{name: "zero count", in: "\n\nana:1:0\n", errLine: 3},
		{name: "start is -1", in: "ana:4294967295:1\n", errLine: 1},
		{name: "runs past top", in: "ana:4294967295:65536\n", errLine: 1},
		{name: "wraps", in: "ana:4294901760:65536\n", errLine: 1},
		// The library reads what it cannot convert as 0 and keeps going;
		// each of these would have become a range starting at host id 0.
		{name: "start with a sign", in: "ana:+1:2\n", errLine: 1},
		{name: "start with leading zeros", in: "ana:0100000:65536\n", errLine: 1},
		{name: "space inside a field", in: "ana: 1:2\n", errLine: 1},
		{name: "empty start", in: "ana::65536\n", errLine: 1},
		{name: "hex count", in: "ana:1:0x10\n", errLine: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseSubIDs(strings.NewReader(tt.in))
			checkParseErr(t, err, tt.errLine)
			if tt.errLine == 0 {
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("ParseSubIDs (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func checkParseErr(t *testing.T, err error, line int) {
	t.Helper()
	if line == 0 {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return
	}
	var pe *ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("error %v is not a *ParseError", err)
	}
	if pe.Line != line {
		t.Errorf("error on line %d, want line %d (%v)", pe.Line, line, err)
	}
}

func TestParsePasswd(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []PasswdEntry
		errLine int
	}{
		{
			name: "debian",
			in:   "root:x:0:0:root:/root:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\nana:x:1000:1000:Ana,,,:/home/ana:/bin/bash\n",
			want: []PasswdEntry{{"root", 0, 0}, {"nobody", 65534, 65534}, {"ana", 1000, 1000}},
		},
		{name: "nis compat and comments", in: "+@admins\n-bob\n# x\nana:x:1000:100::/:\n", want: []PasswdEntry{{"ana", 1000, 100}}},
		{name: "short line", in: "root:x:0:0:root:/root:/bin/bash\nana:x\n", errLine: 2},
		{name: "bad uid", in: "ana:x:abc:1000::/:\n", errLine: 1},
		{name: "bad gid", in: "ana:x:1000:-5::/:\n", errLine: 1},
		{name: "four fields are enough", in: "ana:x:1000:100\n", want: []PasswdEntry{{"ana", 1000, 100}}},
		{name: "uid past the largest id", in: "ana:x:4294967295:1::/:\n", errLine: 1},
		{name: "empty uid", in: "ana:x::1::/:\n", errLine: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParsePasswd(strings.NewReader(tt.in))
			checkParseErr(t, err, tt.errLine)
			if tt.errLine == 0 {
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("ParsePasswd (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestParseGroup(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []GroupEntry
		errLine int
	}{
		{name: "debian", in: "root:x:0:\nsudo:x:27:ana,bob\n", want: []GroupEntry{{"root", 0}, {"sudo", 27}}},
		{name: "short line", in: "root:x\n", errLine: 1},
		{name: "bad gid", in: "root:x:0:\nx:x:4294967296:\n", errLine: 2},
		{name: "gid with leading zero", in: "x:x:010:\n", errLine: 1},
		{
			name: "member list longer than a scanner's default line",
			in:   "big:x:5000:" + strings.Repeat("member,", 20000) + "last\nroot:x:0:\n",
			want: []GroupEntry{{"big", 5000}, {"root", 0}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseGroup(strings.NewReader(tt.in))
			checkParseErr(t, err, tt.errLine)
			if tt.errLine == 0 {
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("ParseGroup (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestOwned(t *testing.T) {
	es := []SubIDEntry{{"ana", 1, 1}, {"1000", 2, 1}, {"bob", 3, 1}, {"10000", 4, 1}}
	got := Owned(es, "ana", 1000)
	want := []SubIDEntry{{"ana", 1, 1}, {"1000", 2, 1}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Owned (-want +got):\n%s", diff)
	}
}

func TestReadHostIDs(t *testing.T) {
	write := func(dir, name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("subid files optional", func(t *testing.T) {
		dir := t.TempDir()
		write(dir, "passwd", "root:x:0:0::/root:/bin/sh\n")
		write(dir, "group", "root:x:0:\n")
		got, err := ReadHostIDs(dir)
		if err != nil {
			t.Fatal(err)
		}
		want := HostIDs{Passwd: []PasswdEntry{{"root", 0, 0}}, Groups: []GroupEntry{{"root", 0}}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("ReadHostIDs (-want +got):\n%s", diff)
		}
	})
	t.Run("passwd required", func(t *testing.T) {
		dir := t.TempDir()
		write(dir, "group", "root:x:0:\n")
		if _, err := ReadHostIDs(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("err = %v, want ErrNotExist", err)
		}
	})
	t.Run("error names file and line", func(t *testing.T) {
		dir := t.TempDir()
		write(dir, "subuid", "ana:1:65536\nbad\n")
		_, err := ReadHostIDs(dir)
		want := filepath.Join(dir, "subuid") + ": line 2: "
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("err = %v, want prefix %q", err, want)
		}
	})
}
