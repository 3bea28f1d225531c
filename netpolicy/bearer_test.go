package netpolicy

import (
	"io"
	"net/http"
	"testing"
)

// TestTokenAsEitherHeader: each route accepts the token the way each agent
// sends it, whatever the header the route sends the real key in: codex and
// OpenAI clients send OPENAI_API_KEY as a bearer token, Claude Code sends
// ANTHROPIC_AUTH_TOKEN as a bearer token and ANTHROPIC_API_KEY as x-api-key
// (agentbox compose gives agents only the first two), gemini-cli sends
// GEMINI_API_KEY as x-goog-api-key. The upstream gets
// the real key in its route's header and never the token.
func TestTokenAsEitherHeader(t *testing.T) {
	var got seen
	port, caFile := tlsUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		got.record(r)
		io.WriteString(w, `{"ok":true}`)
	}, false)
	cfg := Config{Upstreams: map[string]Upstream{
		"openai":    {URL: "https://upstream.test:" + port, CAFile: caFile},
		"anthropic": {URL: "https://upstream.test:" + port, CAFile: caFile},
		"google":    {URL: "https://upstream.test:" + port, CAFile: caFile},
	}}
	env := map[string]string{"OPENAI_API_KEY": "sk-real-openai", "ANTHROPIC_API_KEY": "sk-ant-real", "GEMINI_API_KEY": "AIza-real-gemini"}
	tg := startGateway(t, cfg, map[string][]string{"upstream.test": {"127.0.0.1"}}, env)
	tests := []struct {
		name, path, header, value string
		wantHeader, wantKey       string
	}{
		{"ANTHROPIC_AUTH_TOKEN", "/anthropic/v1/messages", "Authorization", "Bearer " + testToken, "X-Api-Key", "sk-ant-real"},
		{"ANTHROPIC_API_KEY", "/anthropic/v1/messages", "X-Api-Key", testToken, "X-Api-Key", "sk-ant-real"},
		{"OPENAI_API_KEY", "/openai/v1/responses", "Authorization", "Bearer " + testToken, "Authorization", "Bearer sk-real-openai"},
		{"OPENAI_API_KEY as x-api-key", "/openai/v1/responses", "X-Api-Key", testToken, "Authorization", "Bearer sk-real-openai"},
		{"GEMINI_API_KEY", "/google/v1beta/models/m:streamGenerateContent?alt=sse", "X-Goog-Api-Key", testToken, "X-Goog-Api-Key", "AIza-real-gemini"},
	}
	for i, tc := range tests {
		resp := modelRequest(t, tg.addr, "POST", tc.path, `{}`, map[string]string{tc.header: tc.value})
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %s", tc.name, resp.Status)
		}
		reqs := got.all()
		if len(reqs) != i+1 {
			t.Fatalf("%s: upstream saw %d requests, want %d", tc.name, len(reqs), i+1)
		}
		h := reqs[i].header
		if h.Get(tc.wantHeader) != tc.wantKey {
			t.Errorf("%s: upstream %s = %q, want the real key", tc.name, tc.wantHeader, h.Get(tc.wantHeader))
		}
		for _, other := range []string{"Authorization", "X-Api-Key", "X-Goog-Api-Key"} {
			if other != tc.wantHeader && h.Get(other) != "" {
				t.Errorf("%s: upstream got %s too", tc.name, other)
			}
		}
	}
}
