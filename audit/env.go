package audit

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// Credential names. A variable is credential-shaped when, split into words
// at "_", "-" and ".", its name
//
//   - contains one of secretWords (TOKEN, SECRET, PASSWORD, PASSWD, PASS,
//     CREDENTIAL, APIKEY, …), or
//   - contains one of keyPrefixes followed by KEY (API_KEY, ACCESS_KEY,
//     PRIVATE_KEY, SECRET_KEY, …), or
//   - starts with AWS_ (other than the non-secret awsSettings), or
//   - is one of secretNames,
//
// and its last word is not one of notSecretSuffixes (…_FILE, …_URL, …_PATH
// name where a secret is, not the secret), and its value is not an absolute
// path (a path to a key is not the key). The list merges the names that
// gitleaks, detect-secrets, trufflehog and the Docker/compose docs treat as
// credentials. Matching is by whole words, so look-alikes such as
// TOKENIZERS_PARALLELISM or PASSTHROUGH are not secrets. A value that has the
// shape of a known token (ghp_…, sk-ant-…, AKIA…, a private key, a URL with a
// password) is a secret whatever the variable is called.
var (
	secretWords = wordSet("TOKEN", "TOKENS", "AUTHTOKEN", "SECRET", "SECRETS",
		"PASSWORD", "PASSWORDS", "PASSWD", "PASS", "PASSPHRASE", "CREDENTIAL",
		"CREDENTIALS", "CREDS", "APIKEY", "APIKEYS", "ACCESSKEY", "SECRETKEY",
		"PRIVATEKEY", "AUTHKEY", "PAT", "JWT", "BEARER")
	keyPrefixes = wordSet("API", "ACCESS", "PRIVATE", "SECRET", "AUTH", "MASTER",
		"ENCRYPTION", "SIGNING", "SSH", "GPG", "LICENSE", "ACCOUNT", "SERVICE",
		"CLIENT", "APP", "WEBHOOK", "SESSION")
	secretNames = wordSet("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "HF_TOKEN",
		"GITHUB_TOKEN", "GH_TOKEN", "GOOGLE_APPLICATION_CREDENTIALS",
		"NPM_CONFIG__AUTH", "DOCKER_AUTH_CONFIG", "KAGGLE_KEY", "SENTRY_DSN",
		"PGPASSWORD", "MYSQL_PWD", "REDISCLI_AUTH", "VAULT_TOKEN", "KUBECONFIG_DATA")
	awsSettings = wordSet("AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE",
		"AWS_DEFAULT_OUTPUT", "AWS_PAGER", "AWS_SDK_LOAD_CONFIG",
		"AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE", "AWS_ENDPOINT_URL",
		"AWS_CA_BUNDLE", "AWS_RETRY_MODE", "AWS_MAX_ATTEMPTS")
	notSecretSuffixes = wordSet("FILE", "PATH", "DIR", "URL", "URI", "ENDPOINT",
		"HOST", "PORT", "NAME", "USER", "USERNAME", "TYPE", "ENABLED", "TTL",
		"EXPIRY", "LENGTH", "PREFIX", "HEADER", "POLICY", "REGION", "ID")
)

// tokenShape recognises credential values of one kind by its well-known
// prefix.
type tokenShape struct {
	what  string
	match func(string) bool
}

// tokenShapes are the shapes. The prefixed ones are checked by hand
// (prefixed), not as regexps: their counted repetitions (at least 20
// characters of a class, exactly 35) make large regexp programs, which
// every start of agentbox would otherwise build before main, and which a
// run's self-audit would build again at its first value. TestTokenShapes
// holds each to the regexp it replaces.
var tokenShapes = []tokenShape{
	{"a GitHub token", anyOf(prefixed(alnum, 20, 0, "ghp_", "gho_", "ghu_", "ghs_", "ghr_"), prefixed(alnum+"_", 20, 0, "github_pat_"))},
	{"an Anthropic API key", prefixed(alnum+"_-", 20, 0, "sk-ant-")},
	// `^sk-(proj-)?[A-Za-z0-9_-]{20,}$`: "proj-" is of the class, so the
	// optional group adds no value the class does not match.
	{"an OpenAI-style API key", prefixed(alnum+"_-", 20, 0, "sk-")},
	{"an AWS access key id", prefixed(upperDigits, 16, 16, "AKIA", "ASIA")},
	{"a Hugging Face token", prefixed(alnum, 30, 0, "hf_")},
	{"a GitLab token", prefixed(alnum+"_-", 20, 0, "glpat-")},
	{"a Slack token", prefixed(alnum+"-", 10, 0, "xoxa-", "xoxb-", "xoxp-", "xoxo-", "xoxs-", "xoxr-")},
	{"a Google API key", prefixed(alnum+"_-", 35, 35, "AIza")},
	{"a private key", func(v string) bool { return privateKey().MatchString(v) }},
	{"a URL with a password", func(v string) bool { return urlWithPassword().MatchString(v) }},
}

// The character classes of the prefixed shapes.
const (
	alnum       = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	upperDigits = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
)

// prefixed matches a value that is one of prefixes followed by at least
// `least` and (max > 0) at most max characters, all of class (ASCII).
func prefixed(class string, least, max int, prefixes ...string) func(string) bool {
	return func(v string) bool {
		for _, p := range prefixes {
			rest, ok := strings.CutPrefix(v, p)
			if ok && len(rest) >= least && (max == 0 || len(rest) <= max) && onlyOf(rest, class) {
				return true
			}
		}
		return false
	}
}

func onlyOf(s, class string) bool {
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(class, s[i]) < 0 {
			return false
		}
	}
	return true
}

func anyOf(fs ...func(string) bool) func(string) bool {
	return func(v string) bool {
		for _, f := range fs {
			if f(v) {
				return true
			}
		}
		return false
	}
}

var (
	privateKey      = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----`) })
	urlWithPassword = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*://[^/@:\s]*:[^/@\s]+@`)
	})
)

// absPath matches a value that is a file path (`^/\S*$`): a path to a key
// is not the key.
func absPath(v string) bool { return strings.HasPrefix(v, "/") && !strings.ContainsAny(v, "\t\n\f\r ") }

// engineEnv are variables that point a client at a container engine.
var engineEnv = wordSet("DOCKER_HOST", "CONTAINER_HOST", "CONTAINERD_ADDRESS", "PODMAN_HOST")

func wordSet(ws ...string) map[string]bool {
	m := make(map[string]bool, len(ws))
	for _, w := range ws {
		m[w] = true
	}
	return m
}

// SecretName reports whether an environment variable name is
// credential-shaped by the documented list.
func SecretName(name string) bool {
	n := strings.ToUpper(name)
	if secretNames[n] {
		return true
	}
	if strings.HasPrefix(n, "AWS_") {
		return !awsSettings[n]
	}
	words := strings.FieldsFunc(n, func(r rune) bool { return r == '_' || r == '-' || r == '.' })
	if len(words) == 0 || notSecretSuffixes[words[len(words)-1]] {
		return false
	}
	for i, w := range words {
		if secretWords[w] || w == "KEY" && i > 0 && keyPrefixes[words[i-1]] {
			return true
		}
	}
	return false
}

// secretShape returns what a value looks like when it has a credential's
// shape, or "".
func secretShape(v string) string {
	v = strings.TrimSpace(v)
	for _, s := range tokenShapes {
		if s.match(v) {
			return s.what
		}
	}
	return ""
}

// GatewayTokenPrefix begins every per-run token of agentbox's gateway
// (netpolicy.TokenPrefix): a key for the gateway alone, revoked when the
// sandbox ends, which is what the agent is meant to hold instead of a real
// key. A variable whose whole value is such a token is the gateway's own
// key, whatever its name.
const GatewayTokenPrefix = "agentbox-gw-"

// gatewayToken matches `^agentbox-gw-[A-Za-z0-9_-]{20,}$`, by hand as the
// prefixed credential shapes are (tokenShapes).
var gatewayToken = prefixed(alnum+"_-", 20, 0, GatewayTokenPrefix)

func allowed(name string, o *Options) bool {
	for _, a := range o.AllowEnv {
		if a == name {
			return true
		}
	}
	return false
}

// checkSecretEnv reports credential-named or credential-shaped variables.
// Values are read, never printed.
func checkSecretEnv(c *Container, o *Options) []Finding {
	var out []Finding
	for _, e := range c.Env {
		if allowed(e.Name, o) || engineEnv[strings.ToUpper(e.Name)] || gatewayToken(e.Value) {
			continue
		}
		detail := ""
		switch shape := secretShape(e.Value); {
		case e.FromSecret:
			detail = "the value is read from a Kubernetes Secret (" + e.From + "): the agent holds the credential itself"
		case e.From != "" && SecretName(e.Name):
			detail = "credential-named variable whose value comes from " + e.From
		case e.FromHost && SecretName(e.Name):
			detail = "credential-named variable passed through from the environment of whoever runs compose"
		case e.Value == "":
			continue
		case SecretName(e.Name) && !absPath(e.Value):
			detail = "credential-named variable with a value (not shown)"
		case shape != "":
			detail = fmt.Sprintf("the value has the shape of %s (not shown)", shape)
		default:
			continue
		}
		f := newFinding(CodeSecretInEnv, e.Name, detail, OrLocation(e.Location, c.keyLocation("environment")))
		f.Evidence = "env " + e.Name + "=<withheld>"
		out = append(out, f)
	}
	return out
}

// checkEngineEnv reports variables that point a client at an engine.
func checkEngineEnv(c *Container, o *Options) []Finding {
	var out []Finding
	for _, e := range c.Env {
		if !engineEnv[strings.ToUpper(e.Name)] || (!e.FromHost && e.Value == "") {
			continue
		}
		detail := fmt.Sprintf("%s points clients at an engine API", e.Name)
		scheme, _, _ := strings.Cut(e.Value, "://")
		switch {
		case e.FromHost:
			detail = fmt.Sprintf("%s is passed through from the environment of whoever runs compose", e.Name)
		case scheme == "unix":
			detail = fmt.Sprintf("%s points at a unix socket: an engine socket reachable from inside", e.Name)
		case scheme == "tcp" || scheme == "ssh" || scheme == "http" || scheme == "https":
			detail = fmt.Sprintf("%s points at a remote engine over %s", e.Name, scheme)
		}
		f := newFinding(CodeContainerSocket, e.Name, detail, OrLocation(e.Location, c.keyLocation("environment")))
		f.Evidence = "env " + e.Name + "=<withheld>"
		f.Unknown = e.FromHost
		out = append(out, f)
	}
	return out
}
