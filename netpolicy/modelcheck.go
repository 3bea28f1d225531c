package netpolicy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
)

// checkModel enforces a route's model list. It reads the whole request body
// (up to Limits.MaxBodyBytes) and puts it back for forwarding. It returns a
// status and reason to refuse with, or 0.
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
	max := cc.g.limits.MaxBodyBytes
	b, err := io.ReadAll(io.LimitReader(req.Body, max+1))
	if err != nil {
		return http.StatusBadRequest, "reading the request body: " + err.Error()
	}
	if int64(len(b)) > max {
		return http.StatusRequestEntityTooLarge, fmt.Sprintf("route %s restricts model names and the body is over %d bytes", r.name, max)
	}
	req.Body, req.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
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

// modelNames returns the values of every top-level key spelled "model" in any
// letter case; a non-string value is an error.
func modelNames(b []byte) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("want a JSON object")
	}
	var models []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if !strings.EqualFold(key, "model") {
			continue
		}
		var m string
		if err := json.Unmarshal(v, &m); err != nil {
			return nil, fmt.Errorf("%q is not a string", key)
		}
		models = append(models, m)
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("data after the JSON object")
	}
	return models, nil
}

func (r *route) modelList() string {
	l := make([]string, 0, len(r.models))
	for m := range r.models {
		l = append(l, m)
	}
	sort.Strings(l)
	return strings.Join(l, ", ")
}
