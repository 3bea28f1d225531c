package account

import (
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/agentbox/agentbox/policy/homesecrets"
)

// Secret is a credential file or directory in a home that the audit asks
// about. Dir entries are asked "can the account list it", files "can it
// read it".
type Secret struct {
	Path string `json:"path"`
	What string `json:"what"`
	Dir  bool   `json:"dir,omitempty"`
}

// The credential entries of a home (directories, and files such as
// ~/.netrc) are the planner's list, homesecrets.List (policy.HomeSecrets):
// one list for the planner's refusals, this audit and the self-test's host
// check. A directory entry is asked "can the account list it", a file
// entry "can it read it".

// secretFiles are credential files, relative to a home; a * pattern
// matches within one directory.
var secretFiles = []struct{ rel, what string }{
	{".ssh/id_*", "SSH private key"},
	{".ssh/*.pem", "private key"},
	{".aws/credentials", "AWS credentials"},
	{".aws/config", "AWS configuration (may hold keys)"},
	{".config/gh/hosts.yml", "GitHub CLI token"},
	{".docker/config.json", "Docker registry credentials"},
	{".netrc", "netrc passwords"},
	{".kube/config", "Kubernetes credentials"},
	{".git-credentials", "git stored credentials"},
	{".npmrc", "npm token"},
	{".pypirc", "PyPI token"},
	{".config/gcloud/application_default_credentials.json", "Google Cloud credentials"},
	{".config/gcloud/credentials.db", "Google Cloud credentials"},
	{".azure/msal_token_cache.json", "Azure tokens"},
	{".claude/.credentials.json", "Claude Code credentials"},
	{".codex/auth.json", "Codex credentials"},
	{".gnupg/private-keys-v1.d", "GnuPG private keys"},
	{".env", "environment file"},
	{".env.*", "environment file"},
	{"*.env", "environment file"},
}

// Secrets lists the credential directories and files present in home,
// sorted by path. Public halves of keys (*.pub) are not secrets.
func Secrets(home string) []Secret {
	var out []Secret
	for _, e := range homesecrets.List {
		p := filepath.Join(home, e.Rel)
		if fi, err := os.Stat(p); err == nil {
			out = append(out, Secret{Path: p, What: e.What, Dir: fi.IsDir()})
		}
	}
	for _, f := range secretFiles {
		ms, _ := filepath.Glob(filepath.Join(home, f.rel)) // fixed patterns: no error
		for _, m := range ms {
			fi, err := os.Stat(m)
			if err != nil || strings.HasSuffix(m, ".pub") {
				continue
			}
			out = append(out, Secret{Path: m, What: f.what, Dir: fi.IsDir()})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return dedupe(out)
}

func dedupe(ss []Secret) []Secret {
	var out []Secret
	for i, s := range ss {
		if i == 0 || s.Path != ss[i-1].Path {
			out = append(out, s)
		}
	}
	return out
}
