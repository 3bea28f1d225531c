package scripted

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var steps = []Step{{"one", "echo one"}, {"two", "echo two"}}

func post(t *testing.T, h http.Handler, path string, body map[string]any) string {
	t.Helper()
	b, _ := json.Marshal(body)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, strings.NewReader(string(b))))
	out, _ := io.ReadAll(rec.Result().Body)
	if rec.Code != http.StatusOK {
		t.Fatalf("%s: %d %s", path, rec.Code, out)
	}
	return string(out)
}

// Each API's conversation, one request per turn: the first asks for step
// one, the second carries its result and gets step two, the third carries
// both and gets the final text.
func TestThreeAPIs(t *testing.T) {
	bashSchema := map[string]any{"type": "object", "properties": map[string]any{"command": map[string]any{"type": "string"}}}
	for _, tc := range []struct {
		name, path string
		tools      map[string]any // the request's tool fields
		turn       func(i int) map[string]any
		want       []string // what each answer must hold
	}{
		{
			name: "responses exec_command", path: "/v1/responses",
			tools: map[string]any{"tools": []any{map[string]any{"type": "function", "name": "exec_command", "parameters": map[string]any{"properties": map[string]any{"cmd": map[string]any{"type": "string"}}}}}},
			turn: func(i int) map[string]any {
				var in []any
				for j := range i {
					id := callPrefix + string(rune('0'+j))
					in = append(in, map[string]any{"type": "function_call", "call_id": id}, map[string]any{"type": "function_call_output", "call_id": id, "output": "out " + steps[j].Name})
				}
				return map[string]any{"input": in}
			},
			want: []string{`"name":"exec_command"`, `\"cmd\":\"echo two\"`, Done},
		},
		{
			name: "responses code mode", path: "/v1/responses",
			tools: map[string]any{"input": []any{map[string]any{"type": "additional_tools", "tools": []any{map[string]any{"type": "namespace", "name": "functions", "tools": []any{
				map[string]any{"type": "custom", "name": "exec", "description": "nested: tools.exec_command(args)"},
			}}}}}},
			turn: func(i int) map[string]any {
				in := []any{map[string]any{"type": "additional_tools", "tools": []any{map[string]any{"type": "namespace", "name": "functions", "tools": []any{
					map[string]any{"type": "custom", "name": "exec", "description": "nested: tools.exec_command(args)"},
				}}}}}
				for j := range i {
					id := callPrefix + string(rune('0'+j))
					in = append(in, map[string]any{"type": "custom_tool_call", "call_id": id}, map[string]any{"type": "custom_tool_call_output", "call_id": id, "output": []any{map[string]any{"type": "input_text", "text": "out " + steps[j].Name}}})
				}
				return map[string]any{"input": in}
			},
			want: []string{`"type":"custom_tool_call"`, `tools.exec_command({cmd: \"echo two\"`, Done},
		},
		{
			name: "chat shell argv", path: "/v1/chat/completions",
			tools: map[string]any{"tools": []any{map[string]any{"type": "function", "function": map[string]any{"name": "shell", "parameters": map[string]any{"properties": map[string]any{"command": map[string]any{"type": "array"}}}}}}},
			turn: func(i int) map[string]any {
				var msgs []any
				for j := range i {
					id := callPrefix + string(rune('0'+j))
					msgs = append(msgs, map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{"id": id}}}, map[string]any{"role": "tool", "tool_call_id": id, "content": "out " + steps[j].Name})
				}
				return map[string]any{"messages": msgs}
			},
			want: []string{`"tool_calls"`, `[\"bash\",\"-lc\",\"echo two\"]`, Done},
		},
		{
			name: "messages Bash", path: "/v1/messages",
			tools: map[string]any{"tools": []any{map[string]any{"name": "Read", "input_schema": map[string]any{}}, map[string]any{"name": "Bash", "input_schema": bashSchema}}},
			turn: func(i int) map[string]any {
				var msgs []any
				for j := range i {
					id := callPrefix + string(rune('0'+j))
					msgs = append(msgs, map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": id}}},
						map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": id, "content": []any{map[string]any{"type": "text", "text": "out " + steps[j].Name}}}}})
				}
				return map[string]any{"messages": msgs}
			},
			want: []string{`"tool_use"`, `echo two`, Done},
		},
	} {
		for _, stream := range []bool{false, true} {
			t.Run(tc.name+map[bool]string{false: "", true: " streamed"}[stream], func(t *testing.T) {
				s := New(steps)
				for i := range 3 {
					body := tc.turn(i)
					for k, v := range tc.tools {
						if _, ok := body[k]; !ok {
							body[k] = v
						}
					}
					body["stream"] = stream
					out := post(t, s, tc.path, body)
					if want := tc.want[i]; i > 0 && !strings.Contains(out, want) {
						t.Errorf("turn %d: answer lacks %s:\n%s", i, want, out)
					}
					if i == 0 && !strings.Contains(out, callPrefix+"0") {
						t.Errorf("turn 0: no call of step one:\n%s", out)
					}
					if stream && !strings.HasPrefix(out, "event: ") && !strings.HasPrefix(out, "data: ") {
						t.Errorf("turn %d: not an event stream:\n%s", i, out)
					}
				}
				for _, st := range steps {
					out, ok := s.Output(st.Name)
					if !ok || out != "out "+st.Name || !s.Asked(st.Name) {
						t.Errorf("step %s: output %q %v, asked %v", st.Name, out, ok, s.Asked(st.Name))
					}
				}
			})
		}
	}
}

func TestNoDrivableTool(t *testing.T) {
	s := New(steps)
	out := post(t, s, "/v1/messages", map[string]any{"tools": []any{map[string]any{"name": "Read", "input_schema": map[string]any{}}}})
	if !strings.Contains(out, NoTool) || s.Asked("one") {
		t.Errorf("answer %s, asked %v", out, s.Asked("one"))
	}
	if diff := cmp.Diff([]string{"Read"}, s.Tools()); diff != "" {
		t.Error(diff)
	}
}

func TestWatch(t *testing.T) {
	s := New(steps)
	s.Watch("canary", "s3cr3t-value-123")
	s.Watch("short", "abc")
	post(t, s, "/v1/chat/completions", map[string]any{"messages": []any{map[string]any{"role": "tool", "content": "env: X=s3cr3t-value-123 abc"}}})
	if diff := cmp.Diff([]string{"canary"}, s.Leaked()); diff != "" {
		t.Error(diff)
	}
}

func TestFindMarker(t *testing.T) {
	for _, tc := range []struct {
		out, step string
		want      Marker
		ok        bool
	}{
		{"noise\nABX-RESULT name=mount-tmpfs rc=32 err=permission_denied\n", "mount-tmpfs", Marker{Name: "mount-tmpfs", RC: 32, Fields: map[string]string{"err": "permission_denied"}}, true},
		{"Output:\r\nABX-RESULT name=a rc=1\r\nABX-RESULT name=a rc=0 x=y", "a", Marker{Name: "a", RC: 0, Fields: map[string]string{"x": "y"}}, true},
		{"prefix ABX-RESULT name=a rc=7", "a", Marker{Name: "a", RC: 7, Fields: map[string]string{}}, true},
		{"rejected: printf 'ABX-RESULT name=a rc=%s out=%s'", "a", Marker{}, false},
		{"ABX-RESULT name=b rc=0", "a", Marker{}, false},
		{"", "a", Marker{}, false},
	} {
		got, ok := FindMarker(tc.out, tc.step)
		if ok != tc.ok || (ok && !cmp.Equal(got, tc.want)) {
			t.Errorf("FindMarker(%q, %s) = %+v %v, want %+v %v", tc.out, tc.step, got, ok, tc.want, tc.ok)
		}
	}
}

// gemini-cli's conversation over the Gemini API: tools are
// functionDeclarations (its run_shell_command, its schema either as
// parametersJsonSchema or as an OpenAPI-style parameters with capital
// types), calls are functionCall parts, results functionResponse parts
// that echo the call's id, or not, when they pair by position; the
// streamed method answers with data lines.
func TestGemini(t *testing.T) {
	decls := map[string][]any{
		"parametersJsonSchema": {
			map[string]any{"name": "read_file", "parametersJsonSchema": map[string]any{}},
			map[string]any{"name": "run_shell_command", "parametersJsonSchema": map[string]any{"type": "object", "properties": map[string]any{"command": map[string]any{"type": "string"}}}},
		},
		"parameters": {map[string]any{"name": "run_shell_command", "parameters": map[string]any{"type": "OBJECT", "properties": map[string]any{"command": map[string]any{"type": "STRING"}}}}},
	}
	for name, d := range decls {
		for _, method := range []string{"generateContent", "streamGenerateContent?alt=sse"} {
			for _, echoID := range []bool{true, false} {
				t.Run(fmt.Sprintf("%s %s id=%v", name, method, echoID), func(t *testing.T) {
					s := New(steps)
					var contents []any
					for i := range 3 {
						body := map[string]any{"contents": contents, "tools": []any{map[string]any{"functionDeclarations": d}}}
						out := post(t, s, "/v1beta/models/gemini-2.5-flash:"+method, body)
						if strings.HasPrefix(method, "stream") != strings.HasPrefix(out, "data: ") {
							t.Fatalf("turn %d: %s", i, out)
						}
						if i == 2 {
							if !strings.Contains(out, Done) {
								t.Errorf("turn 2: %s", out)
							}
							break
						}
						var resp map[string]any
						if err := json.Unmarshal([]byte(strings.TrimPrefix(strings.TrimSpace(out), "data: ")), &resp); err != nil {
							t.Fatalf("turn %d: %v: %s", i, err, out)
						}
						cand := asMap(asList(resp["candidates"])[0])
						part := asMap(asList(asMap(cand["content"])["parts"])[0])
						fc := asMap(part["functionCall"])
						if str(fc["name"]) != "run_shell_command" || str(asMap(fc["args"])["command"]) != steps[i].Command {
							t.Fatalf("turn %d: call %v", i, part)
						}
						fr := map[string]any{"name": "run_shell_command", "response": map[string]any{"output": "out " + steps[i].Name}}
						if echoID {
							fr["id"] = fc["id"]
						}
						contents = append(contents, map[string]any{"role": "model", "parts": []any{part}},
							map[string]any{"role": "user", "parts": []any{map[string]any{"functionResponse": fr}}})
					}
					for _, st := range steps {
						if out, ok := s.Output(st.Name); !ok || out != "out "+st.Name {
							t.Errorf("step %s: output %q %v", st.Name, out, ok)
						}
					}
					if diff := cmp.Diff([]string{"gemini run_shell_command"}, s.Shapes()); diff != "" {
						t.Error(diff)
					}
				})
			}
		}
	}
}
