// Package scripted is a model server that plays a fixed script instead of
// thinking: each turn it asks the agent's shell tool to run the script's
// next command, reads what the tool printed from the next request (the
// agent sends the tool result back to its model), and ends the turn with a
// plain reply once every step was asked for. It speaks the OpenAI
// Responses and Chat Completions APIs, the Anthropic Messages API and
// Google's Gemini API (generateContent), streamed and not, and answers
// with whichever shell tool the agent declared in its request (tools.go):
// codex's exec_command, shell_command, shell, local_shell or its
// JavaScript exec with a nested exec_command, Claude Code's Bash,
// gemini-cli's run_shell_command, goose's developer__shell, and a
// function of a known shell name whose schema takes a command string or
// argv.
//
// `agentbox selftest --agent` serves it behind a run's gateway, on the
// launcher's loopback: it never calls out, and it keeps what the agent's
// tool printed for each step, which is the only way the outcome of a step
// comes back. It also watches every request body for secrets it is told
// about (a canary's value, the real key the gateway added to a header),
// which must never reach the model from inside the sandbox.
package scripted

import (
	"encoding/json"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
)

// Step is one turn of the script: the shell command the model asks for.
type Step struct {
	Name    string
	Command string
}

// Done is the model's last reply, once every step was asked for.
const Done = "ABX-DONE: every scripted step was asked for."

// NoTool is the reply to a request that declares no shell tool the server
// can drive; the request's tool names are kept (Server.Tools).
const NoTool = "ABX-NO-TOOL: the scripted model finds no shell tool it can drive in this request."

// maxBody bounds what the server reads of one request.
const maxBody = 64 << 20

// Server is the scripted model. Its zero value is not usable: call New.
type Server struct {
	steps []Step

	mu       sync.Mutex
	outputs  map[string]string // step name → what the tool printed
	asked    map[string]bool
	shapes   map[string]bool // the tool shapes the server answered with
	declared map[string]bool // tool names of requests with no drivable shell tool
	watch    map[string]string
	seen     map[string]bool
	requests int
}

// New returns a server that plays steps in order.
func New(steps []Step) *Server {
	return &Server{
		steps: steps, outputs: map[string]string{}, asked: map[string]bool{}, shapes: map[string]bool{},
		declared: map[string]bool{}, watch: map[string]string{}, seen: map[string]bool{},
	}
}

// Watch names a secret that must never arrive in a request body; Leaked
// reports the names of those that did. Values shorter than 8 bytes are
// ignored (they would match by chance).
func (s *Server) Watch(name, value string) {
	if len(value) < 8 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.watch[name] = value
}

// Leaked returns the names of the watched secrets some request body held,
// sorted.
func (s *Server) Leaked() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return sortedKeys(s.seen)
}

// Output returns what the agent's tool printed for the named step, and
// whether a tool result for it came back at all.
func (s *Server) Output(step string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out, ok := s.outputs[step]
	return out, ok
}

// Asked reports whether the server asked the agent to run the named step.
func (s *Server) Asked(step string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.asked[step]
}

// Shapes returns the tool shapes the server answered with ("responses
// exec_command", "messages Bash", …), sorted.
func (s *Server) Shapes() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return sortedKeys(s.shapes)
}

// Tools returns the tool names of the requests that declared tools but no
// shell tool the server can drive, sorted.
func (s *Server) Tools() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return sortedKeys(s.declared)
}

// Requests counts the model requests the server answered.
func (s *Server) Requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// ServeHTTP answers one model request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		http.Error(w, "reading the request: "+err.Error(), http.StatusBadRequest)
		return
	}
	s.inspect(b)
	var req map[string]any
	if len(b) > 0 {
		if err := json.Unmarshal(b, &req); err != nil {
			http.Error(w, "the request body is not JSON: "+err.Error(), http.StatusBadRequest)
			return
		}
	}
	p := r.URL.Path
	switch m := geminiMethod(p); {
	case m == "generateContent" || m == "streamGenerateContent":
		s.serve(w, req, geminiAPI{stream: m == "streamGenerateContent"})
	case m == "countTokens":
		WriteJSON(w, map[string]any{"totalTokens": 10})
	case strings.HasSuffix(p, "/responses"):
		s.serve(w, req, responsesAPI{})
	case strings.HasSuffix(p, "/chat/completions"):
		s.serve(w, req, chatAPI{})
	case strings.HasSuffix(p, "/messages/count_tokens"):
		WriteJSON(w, map[string]any{"input_tokens": 10})
	case strings.HasSuffix(p, "/messages"):
		s.serve(w, req, messagesAPI{})
	case strings.HasSuffix(p, "/models"):
		WriteJSON(w, map[string]any{"object": "list", "data": []any{}})
	default:
		http.NotFound(w, r)
	}
}

// inspect looks for the watched secrets in a request body.
func (s *Server) inspect(body []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for name, v := range s.watch {
		if strings.Contains(string(body), v) {
			s.seen[name] = true
		}
	}
}

// api is one wire format: how it declares tools, carries tool results and
// calls, and how a reply is written.
type api interface {
	name() string
	tools(req map[string]any) []tool
	// history returns the call ids the conversation holds (the server's own
	// calls, echoed) and the tool results by call id.
	history(req map[string]any) (calls []string, results map[string]string)
	writeCall(w http.ResponseWriter, req map[string]any, t tool, id, command string)
	writeText(w http.ResponseWriter, req map[string]any, text string)
}

// serve plays the next step of the script in the format of a.
func (s *Server) serve(w http.ResponseWriter, req map[string]any, a api) {
	calls, results := a.history(req)
	next := s.record(calls, results)
	tools := a.tools(req)
	t, ok := pick(tools)
	switch {
	case next >= len(s.steps):
		a.writeText(w, req, Done)
	case !ok:
		if len(tools) > 0 {
			s.noTool(tools)
		}
		a.writeText(w, req, NoTool)
	default:
		st := s.steps[next]
		s.mu.Lock()
		s.asked[st.Name] = true
		s.shapes[a.name()+" "+t.shape()] = true
		s.mu.Unlock()
		a.writeCall(w, req, t, callID(next, st.Name), st.Command)
	}
}

// record keeps the tool results of the server's calls and returns the
// index of the step to ask for next: the one after the latest the
// conversation holds.
func (s *Server) record(calls []string, results map[string]string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests++
	next := 0
	for _, id := range append(calls, mapKeys(results)...) {
		i, ok := stepOf(id, len(s.steps))
		if !ok {
			continue
		}
		if i+1 > next {
			next = i + 1
		}
		if out, ok := results[id]; ok {
			s.outputs[s.steps[i].Name] = out
		}
	}
	return next
}

func (s *Server) noTool(tools []tool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range tools {
		s.declared[t.name] = true
	}
}

func mapKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
