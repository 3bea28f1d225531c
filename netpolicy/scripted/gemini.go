package scripted

import (
	"net/http"
	"strings"
)

// geminiAPI is Google's Gemini API (generativelanguage v1beta), which
// gemini-cli speaks through @google/genai: POST
// /v1beta/models/MODEL:generateContent, or :streamGenerateContent?alt=sse
// for a stream of GenerateContentResponse objects as server-sent data
// lines. Tools are functionDeclarations, a call is a functionCall part of
// a "model" turn, its result a functionResponse part of the next "user"
// turn. gemini-cli echoes a call's id in its functionResponse; a response
// without one is paired with the call of the same name and position.
type geminiAPI struct{ stream bool }

func (geminiAPI) name() string { return "gemini" }

func (geminiAPI) tools(req map[string]any) []tool {
	var out []tool
	for _, e := range asList(req["tools"]) {
		for _, d := range asList(asMap(e)["functionDeclarations"]) {
			m := asMap(d)
			params := m["parametersJsonSchema"]
			if params == nil {
				params = m["parameters"]
			}
			t, _ := functionTool(str(m["name"]), params)
			out = append(out, t)
		}
	}
	return out
}

func (geminiAPI) history(req map[string]any) ([]string, map[string]string) {
	var calls, pending []string
	results := map[string]string{}
	for _, c := range asList(req["contents"]) {
		for _, p := range asList(asMap(c)["parts"]) {
			part := asMap(p)
			if fc := asMap(part["functionCall"]); fc != nil {
				id := str(fc["id"])
				calls, pending = append(calls, id), append(pending, id)
			}
			if fr := asMap(part["functionResponse"]); fr != nil {
				id := str(fr["id"])
				if id == "" && len(pending) > 0 {
					id = pending[0]
				}
				if i := indexOf(pending, id); i >= 0 {
					pending = append(pending[:i], pending[i+1:]...)
				}
				results[id] = text(fr["response"])
			}
		}
	}
	return calls, results
}

func indexOf(l []string, s string) int {
	for i, x := range l {
		if x == s {
			return i
		}
	}
	return -1
}

func (a geminiAPI) writeCall(w http.ResponseWriter, req map[string]any, t tool, id, command string) {
	a.write(w, req, map[string]any{"functionCall": map[string]any{"id": id, "name": t.name, "args": t.arguments(command)}})
}

func (a geminiAPI) writeText(w http.ResponseWriter, req map[string]any, text string) {
	a.write(w, req, map[string]any{"text": text})
}

// write answers with one part, as one response or as a stream of one
// chunk.
func (a geminiAPI) write(w http.ResponseWriter, _ map[string]any, part map[string]any) {
	resp := map[string]any{
		"candidates": []any{map[string]any{
			"content": map[string]any{"role": "model", "parts": []any{part}}, "finishReason": "STOP", "index": 0,
		}},
		"usageMetadata": map[string]any{"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
		"modelVersion":  "agentbox-scripted",
		"responseId":    "abx",
	}
	if !a.stream {
		WriteJSON(w, resp)
		return
	}
	StartSSE(w)
	SSE(w, "", resp)
}

// geminiMethod reads the method of a Gemini API path,
// ".../models/MODEL:METHOD".
func geminiMethod(path string) string {
	i := strings.LastIndex(path, ":")
	if i < 0 || !strings.Contains(path[:i], "/models/") {
		return ""
	}
	return path[i+1:]
}
