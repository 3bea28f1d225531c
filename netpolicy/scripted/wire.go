package scripted

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// WriteJSON answers with v as a JSON body (the test fake model of
// netpolicy/fakemodel speaks through these helpers too).
func WriteJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// SSE writes one server-sent event and flushes it; an empty event writes
// a data line only (Chat Completions).
func SSE(w http.ResponseWriter, event string, data any) {
	b, _ := json.Marshal(data)
	if event != "" {
		fmt.Fprintf(w, "event: %s\n", event)
	}
	fmt.Fprintf(w, "data: %s\n\n", b)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// StartSSE begins an event stream.
func StartSSE(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
}

func streamed(req map[string]any) bool {
	b, _ := req["stream"].(bool)
	return b
}

func model(req map[string]any) string {
	if m := str(req["model"]); m != "" {
		return m
	}
	return "agentbox-scripted"
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
