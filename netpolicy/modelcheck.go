package netpolicy

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
)

// checkModel enforces a route's model list. It reads the whole request body
// (bufferBody: within Limits.MaxBodyBytes, Limits.BodyTimeout and the
// gateway's body budget) and puts it back for forwarding. It returns a
// status and reason to refuse with, or 0; a refused request's body is given
// back to the budget.
//
// The body must be a JSON object (not compressed) whose "model" key, if any,
// appears once, in any letter case, with an allowed string value: an
// upstream must not be able to read a different model than the gateway did.
func (cc *clientConn) checkModel(req *http.Request, r *route) (int, string) {
	if req.Body == nil || req.Body == http.NoBody {
		return 0, ""
	}
	if enc := req.Header.Get("Content-Encoding"); enc != "" && !strings.EqualFold(enc, "identity") {
		return http.StatusForbidden, fmt.Sprintf("route %s restricts model names and cannot read a %s-encoded body", r.name, enc)
	}
	h, status, reason := cc.bufferBody(req)
	if status != 0 {
		return status, reason
	}
	req.Body, req.ContentLength = h, int64(len(h.b))
	status, reason = r.allowedModel(h.b)
	if status != 0 {
		h.Close()
	}
	return status, reason
}

// allowedModel judges the model a buffered body names.
func (r *route) allowedModel(b []byte) (int, string) {
	models, err := modelNames(b)
	if err != nil {
		return http.StatusForbidden, fmt.Sprintf("route %s restricts model names and the body is not a JSON object: %v", r.name, err)
	}
	switch {
	case len(models) > 1:
		return http.StatusForbidden, "the body names the model more than once"
	case len(models) == 1 && !r.models[models[0]]:
		return http.StatusForbidden, fmt.Sprintf("model %q is not allowed on route %s; allowed: %s", models[0], r.name, r.modelList())
	}
	return 0, ""
}

// Bounds on what modelNames decodes: no longer key can be "model" (five
// characters, each at most a six-byte \u escape), and a model name longer
// than maxModelRaw is refused rather than decoded.
const (
	maxModelKeyRaw = 2 + 5*6
	maxModelRaw    = 4 << 10
)

// modelNames returns the values of every top-level key spelled "model" in any
// letter case; a non-string value is an error. It reads b in place:
// json.Valid checks the syntax without copying, and jsonWalk then only finds
// where top-level keys and values start and end, so a body costs the buffer
// bufferBody lent for it and nothing more (a json.Decoder would copy each
// value it reads, and a single string may be most of the body).
func modelNames(b []byte) ([]string, error) {
	if !json.Valid(b) {
		return nil, errors.New("want one JSON object, and this is not valid JSON")
	}
	w := jsonWalk{b: b}
	if w.space(); !w.eat('{') {
		return nil, errors.New("want a JSON object")
	}
	var models []string
	for w.space(); !w.eat('}'); w.space() {
		at := w.i
		w.eat(',')
		w.space()
		key := w.value()
		w.space()
		w.eat(':')
		w.space()
		val := w.value()
		if w.i == at {
			return nil, errors.New("want a JSON object") // unreachable for valid JSON; never loop
		}
		if !isModelKey(key) {
			continue
		}
		m, err := modelValue(key, val)
		if err != nil {
			return nil, err
		}
		models = append(models, m)
	}
	return models, nil
}

func isModelKey(raw []byte) bool {
	if len(raw) > maxModelKeyRaw {
		return false
	}
	var k string
	return json.Unmarshal(raw, &k) == nil && strings.EqualFold(k, "model")
}

func modelValue(key, raw []byte) (string, error) {
	if len(raw) == 0 || raw[0] != '"' {
		return "", fmt.Errorf("%s is not a string", key)
	}
	if len(raw) > maxModelRaw {
		return "", fmt.Errorf("the model name is longer than %d bytes", maxModelRaw)
	}
	var m string
	if err := json.Unmarshal(raw, &m); err != nil {
		return "", err
	}
	return m, nil
}

// jsonWalk steps through JSON that json.Valid accepted, so it checks
// nothing itself: it finds where a value ends.
type jsonWalk struct {
	b []byte
	i int
}

func (w *jsonWalk) space() {
	for w.i < len(w.b) && (w.b[w.i] == ' ' || w.b[w.i] == '\t' || w.b[w.i] == '\n' || w.b[w.i] == '\r') {
		w.i++
	}
}

func (w *jsonWalk) eat(c byte) bool {
	if w.i < len(w.b) && w.b[w.i] == c {
		w.i++
		return true
	}
	return false
}

// value returns the value starting at w.i and moves past it.
func (w *jsonWalk) value() []byte {
	start := w.i
	depth := 0
	for w.i < len(w.b) {
		switch c := w.b[w.i]; {
		case c == '"':
			w.skipString()
			if depth == 0 {
				return w.b[start:w.i]
			}
			continue
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			if depth == 0 {
				return w.b[start:w.i]
			}
			depth--
			if depth == 0 {
				w.i++
				return w.b[start:w.i]
			}
		case depth == 0 && (c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			return w.b[start:w.i]
		}
		w.i++
	}
	return w.b[start:w.i]
}

// skipString moves past the string starting at w.i.
func (w *jsonWalk) skipString() {
	for w.i++; w.i < len(w.b); w.i++ {
		switch w.b[w.i] {
		case '\\':
			w.i++
		case '"':
			w.i++
			return
		}
	}
}

func (r *route) modelList() string {
	l := make([]string, 0, len(r.models))
	for m := range r.models {
		l = append(l, m)
	}
	sort.Strings(l)
	return strings.Join(l, ", ")
}
