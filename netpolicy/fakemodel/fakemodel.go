// Package fakemodel is a model server for tests: just enough of the OpenAI
// Responses and Chat Completions APIs and of the Anthropic Messages API
// (streamed and not) for codex, Claude Code and OpenAI-compatible tools to
// finish a turn with a fixed reply. It records what each request carried, so
// that a test can prove the real key arrived and the per-run token never
// did. It serves tests only and never calls out.
package fakemodel

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/agentbox/agentbox/netpolicy/scripted"
)

// Request is what the server saw of one request. Header values are kept so
// that tests can look for keys and tokens; do not log them outside tests.
type Request struct {
	Method string
	Path   string
	Header http.Header
	Body   string
}

// Server answers every model request with Reply.
type Server struct {
	Reply string

	mu   sync.Mutex
	reqs []Request
}

// New returns a server that answers with reply.
func New(reply string) *Server { return &Server{Reply: reply} }

// Requests returns the requests seen so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Saw reports whether any request carried secret in a header, the path or
// the body.
func (s *Server) Saw(secret string) bool {
	for _, r := range s.Requests() {
		if strings.Contains(r.Path, secret) || strings.Contains(r.Body, secret) {
			return true
		}
		for _, vs := range r.Header {
			for _, v := range vs {
				if strings.Contains(v, secret) {
					return true
				}
			}
		}
	}
	return false
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	s.mu.Lock()
	s.reqs = append(s.reqs, Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: string(b)})
	s.mu.Unlock()
	var body struct {
		Model  string `json:"model"`
		Stream bool   `json:"stream"`
	}
	_ = json.Unmarshal(b, &body)
	switch {
	case strings.HasSuffix(r.URL.Path, "/responses"):
		s.responses(w, body.Model, body.Stream)
	case strings.HasSuffix(r.URL.Path, "/chat/completions"):
		s.chat(w, body.Model, body.Stream)
	case strings.HasSuffix(r.URL.Path, "/messages/count_tokens"):
		scripted.WriteJSON(w, map[string]any{"input_tokens": 10})
	case strings.HasSuffix(r.URL.Path, "/messages"):
		s.messages(w, body.Model, body.Stream)
	case strings.HasSuffix(r.URL.Path, "/models"):
		scripted.WriteJSON(w, map[string]any{"object": "list", "data": []any{}})
	default:
		http.NotFound(w, r)
	}
}

// responses answers the OpenAI Responses API, which codex uses.
func (s *Server) responses(w http.ResponseWriter, model string, stream bool) {
	msg := map[string]any{
		"type": "message", "id": "msg_fake_1", "role": "assistant", "status": "completed",
		"content": []any{map[string]any{"type": "output_text", "text": s.Reply, "annotations": []any{}}},
	}
	usage := map[string]any{
		"input_tokens": 10, "input_tokens_details": map[string]any{"cached_tokens": 0},
		"output_tokens": 5, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 15,
	}
	resp := map[string]any{
		"id": "resp_fake_1", "object": "response", "model": model, "status": "completed",
		"output": []any{msg}, "usage": usage,
	}
	if !stream {
		scripted.WriteJSON(w, resp)
		return
	}
	scripted.StartSSE(w)
	created := map[string]any{"id": "resp_fake_1", "object": "response", "model": model, "status": "in_progress", "output": []any{}}
	scripted.SSE(w, "response.created", map[string]any{"type": "response.created", "response": created})
	scripted.SSE(w, "response.output_item.added", map[string]any{
		"type": "response.output_item.added", "output_index": 0,
		"item": map[string]any{"type": "message", "id": "msg_fake_1", "role": "assistant", "status": "in_progress", "content": []any{}},
	})
	scripted.SSE(w, "response.output_text.delta", map[string]any{
		"type": "response.output_text.delta", "item_id": "msg_fake_1",
		"output_index": 0, "content_index": 0, "delta": s.Reply,
	})
	scripted.SSE(w, "response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": 0, "item": msg})
	scripted.SSE(w, "response.completed", map[string]any{"type": "response.completed", "response": resp})
}

// chat answers the OpenAI Chat Completions API.
func (s *Server) chat(w http.ResponseWriter, model string, stream bool) {
	if !stream {
		scripted.WriteJSON(w, map[string]any{
			"id": "chatcmpl-fake", "object": "chat.completion", "model": model,
			"choices": []any{map[string]any{
				"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": s.Reply},
			}},
			"usage": map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
		})
		return
	}
	scripted.StartSSE(w)
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{
			"id": "chatcmpl-fake", "object": "chat.completion.chunk", "model": model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}},
		}
	}
	scripted.SSE(w, "", chunk(map[string]any{"role": "assistant", "content": s.Reply}, nil))
	scripted.SSE(w, "", chunk(map[string]any{}, "stop"))
	fmt.Fprint(w, "data: [DONE]\n\n")
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// messages answers the Anthropic Messages API, which Claude Code uses.
func (s *Server) messages(w http.ResponseWriter, model string, stream bool) {
	usage := map[string]any{"input_tokens": 10, "output_tokens": 5}
	if !stream {
		scripted.WriteJSON(w, map[string]any{
			"id": "msg_fake_1", "type": "message", "role": "assistant", "model": model,
			"content":     []any{map[string]any{"type": "text", "text": s.Reply}},
			"stop_reason": "end_turn", "stop_sequence": nil, "usage": usage,
		})
		return
	}
	scripted.StartSSE(w)
	scripted.SSE(w, "message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": "msg_fake_1", "type": "message", "role": "assistant", "model": model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": map[string]any{"input_tokens": 10, "output_tokens": 1},
	}})
	scripted.SSE(w, "content_block_start", map[string]any{
		"type": "content_block_start", "index": 0,
		"content_block": map[string]any{"type": "text", "text": ""},
	})
	scripted.SSE(w, "content_block_delta", map[string]any{
		"type": "content_block_delta", "index": 0,
		"delta": map[string]any{"type": "text_delta", "text": s.Reply},
	})
	scripted.SSE(w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	scripted.SSE(w, "message_delta", map[string]any{
		"type":  "message_delta",
		"delta": map[string]any{"stop_reason": "end_turn", "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 5},
	})
	scripted.SSE(w, "message_stop", map[string]any{"type": "message_stop"})
}
