//go:build integration

package audit

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestDockerEachLabFaultAloneOnAHardenedBase starts from a container both
// scripts audit clean and adds one fault of the lab at a time, the five
// and the privilege settings its script checks: whatever the lab's script
// names for that container, agentbox names too (it may name more), and the
// fault's own code is among them. A fault the lab's script no longer sees
// fails the test rather than passing it vacuously.
func TestDockerEachLabFaultAloneOnAHardenedBase(t *testing.T) {
	d := requireDocker(t)
	home := labHome(t)
	inner, open := d.network("inner", true), d.network("open", false)
	opts := Options{HomeDirs: []string{home}}
	tests := []struct {
		name string
		// edit turns the hardened arguments into the faulty ones.
		edit func(args []string) []string
		code string
	}{
		{"hardened", nil, ""},
		{"home", add("-v", home+":/home/agent:ro"), CodeHomeDirectory},
		{"socket", add("-v", "/var/run/docker.sock:/var/run/docker.sock"), CodeContainerSocket},
		{"secret", add("-e", "GITHUB_TOKEN="+fakeToken), CodeSecretInEnv},
		{"network", replace("--network", open), CodeNetworkPolicy},
		{"hostnet", replace("--network", "host"), CodeNetworkPolicy},
		{"privileged", add("--privileged"), CodePrivileged},
		{"capadd", add("--cap-add", "NET_RAW"), CodeCapsAdded},
		{"root", replace("--user", "0:0"), CodeRunsAsRoot},
		{"writable-root", drop("--read-only"), CodeWritableRoot},
		{"new-privileges", drop("--security-opt", "no-new-privileges"), CodeNewPrivileges},
		{"no-limits", drop("--memory", "64m"), CodeNoLimits},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d.t = t
			args := hardenedArgs(t, inner)
			if tc.edit != nil {
				args = tc.edit(args)
			}
			name := d.container(tc.name, append(args, testImage)...)
			got := failing(d.audit(name, opts))
			lab := labCodes(t, name, "")
			if tc.code == "" {
				if len(got) != 0 || len(lab) != 0 {
					t.Fatalf("the hardened base is not clean: agentbox %v, the lab's script %v", got, lab)
				}
				return
			}
			if !slices.Contains(lab, tc.code) {
				t.Errorf("the lab's script does not name %s for this fault (it names %v): the case no longer tests it", tc.code, lab)
			}
			for _, code := range lab {
				if !slices.Contains(got, code) {
					t.Errorf("the lab's script names %s and agentbox does not; agentbox names %v", code, got)
				}
			}
		})
	}
}

// labHome makes a home directory where the lab's script looks for one,
// /home/NAME (a directory of the test's own, removed at cleanup; no
// account's home is touched).
func labHome(t *testing.T) string {
	t.Helper()
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	home := "/home/abx-lab-" + hex.EncodeToString(b)
	if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	return home
}

// failing is the codes of the findings that fail the audit.
func failing(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		if f.Fails() {
			out = append(out, f.Code)
		}
	}
	return out
}

// add appends arguments to the hardened ones.
func add(extra ...string) func([]string) []string {
	return func(args []string) []string { return append(slices.Clone(args), extra...) }
}

// replace sets the value of flag.
func replace(flag, value string) func([]string) []string {
	return func(args []string) []string {
		out := slices.Clone(args)
		out[slices.Index(out, flag)+1] = value
		return out
	}
}

// drop removes the consecutive arguments seq from the hardened ones.
func drop(seq ...string) func([]string) []string {
	return func(args []string) []string {
		for i := 0; i+len(seq) <= len(args); i++ {
			if slices.Equal(args[i:i+len(seq)], seq) {
				return slices.Delete(slices.Clone(args), i, i+len(seq))
			}
		}
		panic("the hardened arguments have no " + strings.Join(seq, " "))
	}
}
