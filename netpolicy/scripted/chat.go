package scripted

import (
	"fmt"
	"net/http"
)

// chatAPI is the OpenAI Chat Completions API, which OpenAI-compatible
// agents speak.
type chatAPI struct{}

func (chatAPI) name() string { return "chat" }

func (chatAPI) tools(req map[string]any) []tool {
	var out []tool
	for _, e := range asList(req["tools"]) {
		f := asMap(asMap(e)["function"])
		t, _ := functionTool(str(f["name"]), f["parameters"])
		out = append(out, t)
	}
	return out
}

func (chatAPI) history(req map[string]any) ([]string, map[string]string) {
	var calls []string
	results := map[string]string{}
	for _, e := range asList(req["messages"]) {
		m := asMap(e)
		switch str(m["role"]) {
		case "assistant":
			for _, c := range asList(m["tool_calls"]) {
				calls = append(calls, str(asMap(c)["id"]))
			}
		case "tool":
			results[str(m["tool_call_id"])] = text(m["content"])
		}
	}
	return calls, results
}

func (a chatAPI) writeCall(w http.ResponseWriter, req map[string]any, t tool, id, command string) {
	call := map[string]any{"id": id, "type": "function", "function": map[string]any{"name": t.name, "arguments": mustJSON(t.arguments(command))}}
	msg := map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{call}}
	if !streamed(req) {
		a.complete(w, req, msg, "tool_calls")
		return
	}
	delta := map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{"index": 0, "id": id, "type": "function", "function": call["function"]}}}
	a.stream(w, req, delta, "tool_calls")
}

func (a chatAPI) writeText(w http.ResponseWriter, req map[string]any, text string) {
	if !streamed(req) {
		a.complete(w, req, map[string]any{"role": "assistant", "content": text}, "stop")
		return
	}
	a.stream(w, req, map[string]any{"role": "assistant", "content": text}, "stop")
}

func (chatAPI) complete(w http.ResponseWriter, req map[string]any, msg map[string]any, finish string) {
	WriteJSON(w, map[string]any{
		"id": "chatcmpl-abx", "object": "chat.completion", "model": model(req),
		"choices": []any{map[string]any{"index": 0, "finish_reason": finish, "message": msg}},
		"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
	})
}

func (chatAPI) stream(w http.ResponseWriter, req map[string]any, delta map[string]any, finish string) {
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{
			"id": "chatcmpl-abx", "object": "chat.completion.chunk", "model": model(req),
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}},
		}
	}
	StartSSE(w)
	SSE(w, "", chunk(delta, nil))
	SSE(w, "", chunk(map[string]any{}, finish))
	fmt.Fprint(w, "data: [DONE]\n\n")
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}
