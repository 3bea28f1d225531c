package scripted

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// argShape is how a shell tool takes its command.
type argShape int

const (
	argString   argShape = iota // {"<field>": "cmd"}
	argArgv                     // {"<field>": ["bash", "-lc", "cmd"]}
	argLocal                    // codex's local_shell: an exec action with argv
	argCodeMode                 // codex's JavaScript exec with a nested exec_command
)

// tool is a shell tool the agent declared.
type tool struct {
	name      string
	namespace string // the Responses namespace that declared it, if any
	field     string // the argument that holds the command
	args      argShape
	custom    bool // a Responses custom (freeform) tool
}

func (t tool) shape() string {
	switch t.args {
	case argLocal:
		return "local_shell"
	case argCodeMode:
		return t.name + "(exec_command)"
	case argString, argArgv:
	}
	return t.name
}

// shellNames are the names of the shell tools of the agents agentbox knows
// (codex, Claude Code, gemini, goose, aider, opencode), in order of
// preference: a tool that runs one command is preferred to codex's
// JavaScript exec.
var shellNames = []string{
	"exec_command", "shell_command", "shell", "local_shell", "Bash", "bash",
	"run_shell_command", "developer__shell", "execute_command", "run_command",
}

// pick chooses the tool to drive: the first of shellNames that the request
// declared, else codex's code-mode exec when it offers exec_command.
func pick(tools []tool) (tool, bool) {
	for _, n := range shellNames {
		for _, t := range tools {
			if t.name == n && (t.field != "" || t.args == argLocal) {
				return t, true
			}
		}
	}
	for _, t := range tools {
		if t.args == argCodeMode {
			return t, true
		}
	}
	return tool{}, false
}

// functionTool reads a function tool's schema: the command argument is
// "command" or "cmd", a string or an argv array. A tool of a shell name
// whose schema has neither is not driven.
func functionTool(name string, params any) (tool, bool) {
	props, _ := asMap(params)["properties"].(map[string]any)
	for _, field := range []string{"command", "cmd"} {
		p, ok := props[field].(map[string]any)
		if !ok {
			continue
		}
		switch strings.ToLower(str(p["type"])) { // Gemini's schemas spell types in capitals
		case "string":
			return tool{name: name, field: field, args: argString}, true
		case "array":
			return tool{name: name, field: field, args: argArgv}, true
		}
	}
	return tool{name: name}, false
}

// arguments is the JSON argument object of a call of t running command.
func (t tool) arguments(command string) map[string]any {
	if t.args == argArgv {
		return map[string]any{t.field: []string{"bash", "-lc", command}}
	}
	args := map[string]any{t.field: command}
	if t.name == "Bash" {
		args["description"] = "Run the agentbox escape self-test step"
	}
	return args
}

// codeModeInput is the JavaScript for codex's exec tool: it runs command
// with the nested exec_command and hands back its output and exit code.
func codeModeInput(command string) string {
	q, _ := json.Marshal(command)
	return fmt.Sprintf("const r = await tools.exec_command({cmd: %s, yield_time_ms: 30000});\n"+
		"text(String(r.output ?? \"\"));\ntext(\"exit_code=\" + String(r.exit_code));\n", q)
}

// callPrefix starts the id of every call the server makes; the step's
// index follows.
const callPrefix = "call_abx_"

func callID(i int, _ string) string { return callPrefix + strconv.Itoa(i) }

// stepOf reads the step index back from a call id of the server's.
func stepOf(id string, n int) (int, bool) {
	rest, ok := strings.CutPrefix(id, callPrefix)
	if !ok {
		return 0, false
	}
	i, err := strconv.Atoi(rest)
	if err != nil || i < 0 || i >= n {
		return 0, false
	}
	return i, true
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// text flattens a tool result: a string, or the text of every part of a
// list of content parts, or a JSON value's strings, in order.
func text(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []any:
		var parts []string
		for _, e := range x {
			if t := text(e); t != "" {
				parts = append(parts, t)
			}
		}
		return strings.Join(parts, "\n")
	case map[string]any:
		for _, k := range []string{"text", "output", "content"} {
			if t, ok := x[k]; ok {
				return text(t)
			}
		}
	}
	return ""
}
