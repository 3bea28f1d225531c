package netpolicy

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"strings"
)

// TokenPrefix starts every per-run token, so that a token that leaks into a
// log or a file is recognisable (and secret scanners can be taught it).
const TokenPrefix = "agentbox-gw-"

// NewToken returns a fresh per-run token: TokenPrefix and 256 random bits.
// The gateway accepts it until Revoke or Close; it is worth nothing outside
// the gateway, since the real keys never leave the host.
func NewToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("new gateway token: %w", err)
	}
	return TokenPrefix + base64.RawURLEncoding.EncodeToString(b), nil
}

// tokenEqual compares in constant time; an empty want matches nothing.
func tokenEqual(got, want string) bool {
	if want == "" {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// readSecret reads a key or token from a file, trimmed of surrounding
// whitespace. A secret must be one line of printable ASCII, since it goes
// into an HTTP header.
func readSecret(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "", fmt.Errorf("%s is empty", path)
	}
	if err := checkSecret(s); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

func checkSecret(s string) error {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return fmt.Errorf("the secret contains a byte (%#x at %d) that cannot go into an HTTP header", s[i], i)
		}
	}
	return nil
}

// ErrNoToken is returned by LoadToken when the config names no token source.
var ErrNoToken = errors.New("no gateway token: set token_file or token_env in the gateway config")

// LoadToken fills c.Token from TokenFile or TokenEnv, as a standalone
// gateway does. A gateway without a token would refuse every model request,
// so a missing or empty token is an error.
func (c *Config) LoadToken(getenv func(string) string) error {
	switch {
	case c.TokenFile != "":
		t, err := readSecret(c.TokenFile)
		if err != nil {
			return fmt.Errorf("gateway token: %w", err)
		}
		c.Token = t
	case c.TokenEnv != "":
		t := strings.TrimSpace(getenv(c.TokenEnv))
		if t == "" {
			return fmt.Errorf("gateway token: $%s is empty or unset", c.TokenEnv)
		}
		if err := checkSecret(t); err != nil {
			return fmt.Errorf("gateway token: $%s: %w", c.TokenEnv, err)
		}
		c.Token = t
	default:
		return ErrNoToken
	}
	return nil
}
