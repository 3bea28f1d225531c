package compose

import (
	"strings"
	"testing"

	"github.com/agentbox/agentbox/agents"
)

// TestComposeKeysRefusesOtherNames: a launch that carries the key under a
// name the agent service may not carry, or a codex launch whose key
// variable compose cannot rename, is an error rather than a project the
// lab's audit would fail.
func TestComposeKeysRefusesOtherNames(t *testing.T) {
	for _, tc := range []struct {
		name string
		l    agents.Launch
		want string
	}{
		{"a new key variable", agents.Launch{Agent: "gemini", Env: map[string]string{"GEMINI_API_KEY": testToken}}, "GEMINI_API_KEY"},
		{"codex without its env_key override", agents.Launch{Agent: "codex", Argv: []string{"codex"}, Env: map[string]string{agents.TokenEnv: testToken}}, "env_key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := composeKeys(&tc.l, testToken)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("composeKeys: %v, want an error naming %s", err, tc.want)
			}
		})
	}
}

// TestComposeKeysKeepsOtherValues: variables that do not hold the key are
// kept as the adapter set them.
func TestComposeKeysKeepsOtherValues(t *testing.T) {
	l := agents.Launch{Agent: "generic", Env: map[string]string{
		"ANTHROPIC_API_KEY": testToken, agents.TokenEnv: testToken, "OPENAI_API_KEY": testToken, "HTTP_PROXY": "http://gateway:8080",
	}}
	if err := composeKeys(&l, testToken); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{AnthropicTokenEnv: testToken, OpenAIKeyEnv: testToken, "HTTP_PROXY": "http://gateway:8080"}
	if len(l.Env) != len(want) {
		t.Errorf("env %v, want %v", keysOf(l.Env), keysOf(want))
	}
	for k, v := range want {
		if l.Env[k] != v {
			t.Errorf("%s = %q, want %q", k, l.Env[k], v)
		}
	}
}

func keysOf(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
