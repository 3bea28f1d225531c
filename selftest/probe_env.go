package selftest

import (
	"slices"
	"sort"
	"strconv"
	"strings"
)

// credentialWords are name segments (split at "_") that mark a variable as
// credential-shaped: AWS_SECRET_ACCESS_KEY, GITHUB_TOKEN, SSH_AUTH_SOCK, ...
var credentialWords = []string{
	"KEY", "APIKEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE",
	"CREDENTIAL", "CREDENTIALS", "AUTH", "COOKIE", "PAT", "KUBECONFIG", "NETRC",
}

// credentialPrefixes are value prefixes of well-known credential formats.
var credentialPrefixes = []string{
	"sk-", "sk_live_", "rk_live_", "ghp_", "gho_", "ghu_", "ghs_", "github_pat_",
	"glpat-", "xoxb-", "xoxp-", "xapp-", "AKIA", "ASIA", "AIza", "-----BEGIN", "npm_", "hf_",
}

// credentialShaped reports whether a variable looks like it carries a
// credential, by its name's segments or its value's prefix.
func credentialShaped(name, value string) bool {
	for _, w := range strings.FieldsFunc(strings.ToUpper(name), func(r rune) bool { return r == '_' || r == '-' }) {
		if slices.Contains(credentialWords, w) {
			return true
		}
	}
	for _, p := range credentialPrefixes {
		if strings.HasPrefix(value, p) && len(value) >= len(p)+16 {
			return true
		}
	}
	return isJWT(value)
}

// isJWT reports whether v has the shape of a JSON web token.
func isJWT(v string) bool {
	parts := strings.Split(v, ".")
	return len(parts) == 3 && strings.HasPrefix(v, "eyJ") && len(parts[1]) > 8 && len(parts[2]) > 8
}

// suspectVariables returns the sorted names of credential-shaped variables of
// environ that allow does not list. It never returns a value.
func suspectVariables(environ, allow []string) []string {
	var out []string
	for _, kv := range environ {
		name, val, _ := strings.Cut(kv, "=")
		if !slices.Contains(allow, name) && credentialShaped(name, val) && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

func probeEnvironment(e *Env) outcome {
	bad := suspectVariables(e.Environ, e.Config.AllowEnv)
	if len(bad) > 0 {
		return outcome{
			target: "environ", decision: Allow, observed: "credential-shaped",
			detail: "credential-shaped variables (names only): " + strings.Join(bad, ","),
		}
	}
	return outcome{
		target: "environ", decision: Deny, observed: "clean",
		detail: "no credential-shaped variable among " + strconv.Itoa(len(e.Environ)) + " (allowed: " + strings.Join(e.Config.AllowEnv, ",") + ")",
	}
}
