package scripted

import "net/http"

// messagesAPI is the Anthropic Messages API, which Claude Code speaks.
type messagesAPI struct{}

func (messagesAPI) name() string { return "messages" }

func (messagesAPI) tools(req map[string]any) []tool {
	var out []tool
	for _, e := range asList(req["tools"]) {
		m := asMap(e)
		t, _ := functionTool(str(m["name"]), m["input_schema"])
		out = append(out, t)
	}
	return out
}

func (messagesAPI) history(req map[string]any) ([]string, map[string]string) {
	var calls []string
	results := map[string]string{}
	for _, e := range asList(req["messages"]) {
		for _, b := range asList(asMap(e)["content"]) {
			blk := asMap(b)
			switch str(blk["type"]) {
			case "tool_use":
				calls = append(calls, str(blk["id"]))
			case "tool_result":
				results[str(blk["tool_use_id"])] = text(blk["content"])
			}
		}
	}
	return calls, results
}

func (a messagesAPI) writeCall(w http.ResponseWriter, req map[string]any, t tool, id, command string) {
	block := map[string]any{"type": "tool_use", "id": id, "name": t.name, "input": t.arguments(command)}
	if !streamed(req) {
		a.complete(w, req, block, "tool_use")
		return
	}
	start := map[string]any{"type": "tool_use", "id": id, "name": t.name, "input": map[string]any{}}
	delta := map[string]any{"type": "input_json_delta", "partial_json": mustJSON(block["input"])}
	a.stream(w, req, start, delta, "tool_use")
}

func (a messagesAPI) writeText(w http.ResponseWriter, req map[string]any, text string) {
	if !streamed(req) {
		a.complete(w, req, map[string]any{"type": "text", "text": text}, "end_turn")
		return
	}
	a.stream(w, req, map[string]any{"type": "text", "text": ""}, map[string]any{"type": "text_delta", "text": text}, "end_turn")
}

func (messagesAPI) complete(w http.ResponseWriter, req map[string]any, block map[string]any, stop string) {
	WriteJSON(w, map[string]any{
		"id": "msg_abx", "type": "message", "role": "assistant", "model": model(req),
		"content": []any{block}, "stop_reason": stop, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 10, "output_tokens": 5},
	})
}

func (messagesAPI) stream(w http.ResponseWriter, req map[string]any, start, delta map[string]any, stop string) {
	StartSSE(w)
	SSE(w, "message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": "msg_abx", "type": "message", "role": "assistant", "model": model(req), "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": map[string]any{"input_tokens": 10, "output_tokens": 1},
	}})
	SSE(w, "content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": start})
	SSE(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": delta})
	SSE(w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	SSE(w, "message_delta", map[string]any{
		"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": 5},
	})
	SSE(w, "message_stop", map[string]any{"type": "message_stop"})
}
