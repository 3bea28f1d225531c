// Package homesecrets is the one list of the entries of a home directory
// that hold credentials (keys, tokens, session cookies). Package policy
// owns it (policy.HomeSecrets): the planner refuses a bind at, inside or
// containing one; the account audit (account.Secrets) asks whether an
// account can read one; the host check of the self-test (selftest) flags a
// sandbox mount that shows one. It is a leaf so that the in-sandbox init,
// which links selftest, does not link the planner.
package homesecrets

// Entry is one credential entry, relative to a home.
type Entry struct {
	// Rel is the path below the home (".ssh", ".config/gh").
	Rel string
	// What says what it holds, for findings.
	What string
}

// List is every credential entry of a home. Adding one widens all three
// consumers at once; none keeps a list of its own.
var List = []Entry{
	{".ssh", "SSH directory"},
	{".aws", "AWS configuration"},
	{".azure", "Azure CLI state"},
	{".kube", "Kubernetes configuration"},
	{".docker", "Docker client configuration"},
	{".gnupg", "GnuPG home"},
	{".password-store", "pass store"},
	{".netrc", "netrc passwords"},
	{".git-credentials", "git stored credentials"},
	{".npmrc", "npm token"},
	{".pypirc", "PyPI token"},
	{".vault-token", "Vault token"},
	{".config/gcloud", "Google Cloud SDK configuration"},
	{".config/gh", "GitHub CLI configuration"},
	{".config/hub", "hub (GitHub) token"},
	{".config/op", "1Password CLI configuration"},
	{".config/doctl", "DigitalOcean CLI token"},
	{".local/share/keyrings", "GNOME keyrings"},
	{".cargo/credentials", "Cargo registry token"},
	{".cargo/credentials.toml", "Cargo registry token"},
	{".terraform.d", "Terraform credentials"},
	{".codex", "Codex state and credentials"},
	{".claude", "Claude Code state and credentials"},
	{".claude.json", "Claude Code account state"},
	{".gemini", "Gemini CLI state and credentials"},
}

// Rels returns the entries' paths, in List's order.
func Rels() []string {
	out := make([]string, len(List))
	for i, e := range List {
		out[i] = e.Rel
	}
	return out
}
