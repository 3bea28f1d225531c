package apparmor

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	tests := []struct {
		root      string
		enabled   bool
		reasonHas string
	}{
		{"testdata/hosts/enabled", true, ""},
		{"testdata/hosts/disabled", false, "disabled on the kernel command line"},
		{"testdata/hosts/no-securityfs", false, "not an active LSM or securityfs is not mounted"},
		{t.TempDir(), false, "no AppArmor module"},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.root), func(t *testing.T) {
			got := Check(tt.root)
			if got.Enabled != tt.enabled {
				t.Errorf("Enabled = %v, want %v (%s)", got.Enabled, tt.enabled, got.Reason)
			}
			if (tt.reasonHas == "") != (got.Reason == "") || !strings.Contains(got.Reason, tt.reasonHas) {
				t.Errorf("Reason = %q, want it to contain %q", got.Reason, tt.reasonHas)
			}
		})
	}
}

func TestCheckUnreadableParameter(t *testing.T) {
	root := t.TempDir()
	// a directory where the parameter file should be: reading it fails
	if err := os.MkdirAll(filepath.Join(root, "sys/module/apparmor/parameters/enabled"), 0o755); err != nil {
		t.Fatal(err)
	}
	if st := Check(root); st.Enabled || !strings.Contains(st.Reason, "cannot read") {
		t.Errorf("Check = %+v, want not enabled because unreadable", st)
	}
}

func TestIsLoaded(t *testing.T) {
	tests := []struct {
		name string
		want bool
	}{
		{"agentbox-default", true},
		{"docker-default", true},
		{"agentbox", false},
		{"agentbox-default//sub", true},
		{"man", false},
	}
	for _, tt := range tests {
		got, err := isLoaded("testdata/hosts/enabled", tt.name)
		if err != nil || got != tt.want {
			t.Errorf("isLoaded(%q) = %v, %v; want %v", tt.name, got, err, tt.want)
		}
	}
	if _, err := isLoaded("testdata/hosts/no-securityfs", "x"); err == nil {
		t.Error("isLoaded without securityfs returned no error")
	}
}

// fakeParser writes a stand-in for apparmor_parser that records its
// arguments and the profile it was given, and fails when told to.
func fakeParser(t *testing.T, fail bool) (path, argsFile, textFile string) {
	t.Helper()
	dir := t.TempDir()
	path = filepath.Join(dir, "apparmor_parser")
	argsFile, textFile = filepath.Join(dir, "args"), filepath.Join(dir, "text")
	script := "#!/bin/sh\necho \"$@\" > " + argsFile + "\ncat \"$2\" > " + textFile + "\n"
	if fail {
		script += "echo 'AppArmor parser error at line 3: syntax error' >&2\nexit 1\n"
	}
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path, argsFile, textFile
}

func TestLoad(t *testing.T) {
	text, err := Render(DefaultName)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("loads with -Kr", func(t *testing.T) {
		parser, argsFile, textFile := fakeParser(t, false)
		if err := (loader{root: "testdata/hosts/enabled", parser: parser}).load(DefaultName, text); err != nil {
			t.Fatal(err)
		}
		args, _ := os.ReadFile(argsFile)
		if !strings.HasPrefix(string(args), "-Kr /") {
			t.Errorf("parser args = %q, want -Kr PATH", args)
		}
		got, _ := os.ReadFile(textFile)
		if string(got) != text {
			t.Error("parser was not given the profile text")
		}
		tmp := strings.TrimSpace(strings.TrimPrefix(string(args), "-Kr "))
		if _, err := os.Stat(tmp); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("temporary profile %s left behind (%v)", tmp, err)
		}
	})
	t.Run("not enabled", func(t *testing.T) {
		parser, argsFile, _ := fakeParser(t, false)
		err := loader{root: "testdata/hosts/disabled", parser: parser}.load(DefaultName, text)
		if !errors.Is(err, ErrNotEnabled) || !strings.Contains(err.Error(), "kernel command line") {
			t.Errorf("err = %v, want ErrNotEnabled with the reason", err)
		}
		if _, err := os.Stat(argsFile); !errors.Is(err, os.ErrNotExist) {
			t.Error("parser ran although AppArmor is not enabled")
		}
	})
	t.Run("parser fails", func(t *testing.T) {
		parser, _, _ := fakeParser(t, true)
		err := loader{root: "testdata/hosts/enabled", parser: parser}.load(DefaultName, text)
		if err == nil || !strings.Contains(err.Error(), "syntax error") {
			t.Errorf("err = %v, want the parser's message", err)
		}
	})
	t.Run("parser missing", func(t *testing.T) {
		err := loader{root: "testdata/hosts/enabled", parser: filepath.Join(t.TempDir(), "none")}.load(DefaultName, text)
		if err == nil || !strings.Contains(err.Error(), "apt-get install apparmor") {
			t.Errorf("err = %v, want the install hint", err)
		}
	})
	t.Run("name mismatch", func(t *testing.T) {
		parser, _, _ := fakeParser(t, false)
		err := loader{root: "testdata/hosts/enabled", parser: parser}.load("other", text)
		if err == nil || !strings.Contains(err.Error(), "does not declare 'profile other'") {
			t.Errorf("err = %v, want a name mismatch", err)
		}
	})
	t.Run("bad name", func(t *testing.T) {
		if err := Load("../x", text); err == nil {
			t.Error("Load accepted a bad name")
		}
	})
}

func TestDeclares(t *testing.T) {
	tests := []struct {
		text, name string
		want       bool
	}{
		{"profile a flags=(x) {\n}", "a", true},
		{"  profile a {\n}", "a", true},
		{"profile ab {\n}", "a", false},
		{"# profile a {\n}", "a", false},
		{"profile a.b {", "a.b", true},
		{"profile axb {", "a.b", false},
	}
	for _, tt := range tests {
		if got := declares(tt.text, tt.name); got != tt.want {
			t.Errorf("declares(%q, %q) = %v, want %v", tt.text, tt.name, got, tt.want)
		}
	}
}
