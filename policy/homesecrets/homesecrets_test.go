package homesecrets

import (
	"path"
	"slices"
	"testing"
)

// The merged list holds every entry the three lists it replaced held
// (policy.HomeSecrets, account's secretDirs, selftest's homeSecrets), so
// that no consumer narrowed; and each entry is a clean relative path
// with a description.
func TestListIsTheUnion(t *testing.T) {
	was := [][]string{
		{ // policy.HomeSecrets
			".ssh", ".aws", ".azure", ".kube", ".docker", ".gnupg", ".password-store",
			".netrc", ".git-credentials", ".npmrc", ".pypirc", ".vault-token",
			".config/gcloud", ".config/gh", ".config/hub", ".config/op", ".config/doctl",
			".local/share/keyrings", ".cargo/credentials", ".cargo/credentials.toml",
			".terraform.d", ".codex", ".claude", ".claude.json", ".gemini",
		},
		{".ssh", ".aws", ".azure", ".config/gh", ".config/gcloud", ".kube", ".docker", ".gnupg", ".password-store"},                                 // account
		{".ssh", ".aws", ".azure", ".kube", ".docker", ".gnupg", ".netrc", ".git-credentials", ".config/gcloud", ".config/gh", ".npmrc", ".pypirc"}, // selftest
	}
	rels := Rels()
	for _, list := range was {
		for _, r := range list {
			if !slices.Contains(rels, r) {
				t.Errorf("%s is no longer a credential entry", r)
			}
		}
	}
	seen := map[string]bool{}
	for _, e := range List {
		if e.What == "" || e.Rel == "" || path.Clean(e.Rel) != e.Rel || path.IsAbs(e.Rel) || e.Rel[0] == '.' && e.Rel[1] == '.' {
			t.Errorf("entry %+v", e)
		}
		if seen[e.Rel] {
			t.Errorf("%s listed twice", e.Rel)
		}
		seen[e.Rel] = true
	}
}
