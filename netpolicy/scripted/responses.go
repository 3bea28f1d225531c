package scripted

import (
	"net/http"
	"strings"
)

// responsesAPI is the OpenAI Responses API, which codex speaks.
type responsesAPI struct{}

func (responsesAPI) name() string { return "responses" }

// tools reads the request's tools and those of its additional_tools
// items (codex declares its namespaces there), namespaces flattened.
func (responsesAPI) tools(req map[string]any) []tool {
	var out []tool
	var walk func(list []any, ns string)
	walk = func(list []any, ns string) {
		for _, e := range list {
			m := asMap(e)
			name := str(m["name"])
			switch str(m["type"]) {
			case "namespace":
				walk(asList(m["tools"]), name)
			case "local_shell":
				out = append(out, tool{name: "local_shell", args: argLocal})
			case "function":
				t, _ := functionTool(name, m["parameters"])
				t.namespace = ns
				out = append(out, t)
			case "custom":
				t := tool{name: name, namespace: ns, custom: true}
				if name == "exec" && strings.Contains(str(m["description"]), "exec_command(") {
					t.args = argCodeMode
				}
				out = append(out, t)
			}
		}
	}
	walk(asList(req["tools"]), "")
	for _, item := range asList(req["input"]) {
		if m := asMap(item); str(m["type"]) == "additional_tools" {
			walk(asList(m["tools"]), "")
		}
	}
	return out
}

func (responsesAPI) history(req map[string]any) ([]string, map[string]string) {
	var calls []string
	results := map[string]string{}
	for _, item := range asList(req["input"]) {
		m := asMap(item)
		id := str(m["call_id"])
		switch str(m["type"]) {
		case "function_call", "custom_tool_call", "local_shell_call":
			calls = append(calls, id)
		case "function_call_output", "custom_tool_call_output", "local_shell_call_output":
			results[id] = text(m["output"])
		}
	}
	return calls, results
}

// callItem is the output item that calls t.
func callItem(t tool, id, command string) map[string]any {
	item := map[string]any{"id": "fc_" + id, "call_id": id, "status": "completed"}
	switch t.args {
	case argLocal:
		item["type"] = "local_shell_call"
		item["action"] = map[string]any{"type": "exec", "command": []string{"bash", "-lc", command}}
	case argCodeMode:
		item["type"], item["name"], item["input"] = "custom_tool_call", t.name, codeModeInput(command)
	case argString, argArgv:
		item["type"], item["name"], item["arguments"] = "function_call", t.name, mustJSON(t.arguments(command))
	}
	if t.namespace != "" {
		item["namespace"] = t.namespace
	}
	return item
}

func messageItem(text string) map[string]any {
	return map[string]any{
		"type": "message", "id": "msg_abx", "role": "assistant", "status": "completed",
		"content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}},
	}
}

func (a responsesAPI) writeCall(w http.ResponseWriter, req map[string]any, t tool, id, command string) {
	a.write(w, req, callItem(t, id, command))
}

func (a responsesAPI) writeText(w http.ResponseWriter, req map[string]any, text string) {
	a.write(w, req, messageItem(text))
}

// write answers with one output item, as a response object or as the
// event stream codex reads.
func (responsesAPI) write(w http.ResponseWriter, req map[string]any, item map[string]any) {
	usage := map[string]any{
		"input_tokens": 10, "input_tokens_details": map[string]any{"cached_tokens": 0},
		"output_tokens": 5, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 15,
	}
	resp := map[string]any{
		"id": "resp_abx", "object": "response", "model": model(req), "status": "completed",
		"output": []any{item}, "usage": usage,
	}
	if !streamed(req) {
		WriteJSON(w, resp)
		return
	}
	StartSSE(w)
	created := map[string]any{"id": "resp_abx", "object": "response", "model": model(req), "status": "in_progress", "output": []any{}}
	SSE(w, "response.created", map[string]any{"type": "response.created", "response": created})
	SSE(w, "response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": 0, "item": item})
	if str(item["type"]) == "message" {
		SSE(w, "response.output_text.delta", map[string]any{
			"type": "response.output_text.delta", "item_id": item["id"], "output_index": 0, "content_index": 0,
			"delta": text(item["content"]),
		})
	}
	SSE(w, "response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item})
	SSE(w, "response.completed", map[string]any{"type": "response.completed", "response": resp})
}
