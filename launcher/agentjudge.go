package launcher

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentbox/agentbox/ledger"
	"github.com/agentbox/agentbox/netpolicy/scripted"
	"github.com/agentbox/agentbox/selftest"
	"github.com/agentbox/agentbox/workspace"
)

// maxAttemptOutput bounds the tool output a record keeps per attempt.
const maxAttemptOutput = 2 << 10

// judge is the Record stage of an escape-prompt self-test: each attempt's
// verdict from what came back through the agent's tool, cross-checked
// with what the host sees and with the run's denial log. A nil t judges
// nothing.
func (t *agentTest) judge(rec *ledger.Record, p *prepared) {
	if t == nil {
		return
	}
	if p.canary.envValue != "" {
		t.watched["env canary"] = p.canary.envValue
	}
	for _, e := range t.escapes {
		a := t.attempt(e, rec.Denials)
		r := selftest.Result{Probe: e.name, Target: e.target, Expect: e.expect, Decision: selftest.Decision(a.Decision), Observed: a.Observed, RunID: rec.RunID, Detail: a.Detail}
		r.Evidence = r.Digest()
		t.results = append(t.results, r)
		rec.Attempts = append(rec.Attempts, a)
	}
	rec.Notes = strings.TrimSpace(rec.Notes + " escape self-test; tool shapes: " + strings.Join(t.model.Shapes(), ", "))
}

// attempt judges one escape.
func (t *agentTest) attempt(e escape, denials []ledger.Denial) ledger.Attempt {
	a := ledger.Attempt{Name: e.name, Target: e.target, Expect: string(e.expect), Command: e.command}
	a.DeniedBy = deniedBy(e.syscall, denials)
	out, returned := t.model.Output(e.name)
	a.Output = truncate(out, maxAttemptOutput)
	d, observed, detail := t.decide(e, out, returned)
	if hostAllow := t.hostCheck(e); hostAllow != "" {
		d, observed, detail = selftest.Allow, hostAllow, detail+"; "+hostAllow
	}
	if e.name == "workspace-write" && d == selftest.Allow && !t.workspaceWritten(e.target) {
		d, observed, detail = selftest.Unknown, "not on the host", detail+"; the host's workspace does not hold the file"
	}
	a.Decision, a.Observed, a.Detail = string(d), observed, detail
	if e.syscall != "" && d == selftest.Deny && a.DeniedBy == "" {
		a.Detail += "; the denial log has no " + e.syscall + " (the tool may have failed before the syscall, or the layer does not log here)"
	}
	return a
}

// decide reads the attempt's outcome from its tool output.
func (t *agentTest) decide(e escape, out string, returned bool) (selftest.Decision, string, string) {
	switch {
	case !t.model.Asked(e.name):
		if tools := t.model.Tools(); len(tools) > 0 && len(t.model.Shapes()) == 0 {
			return selftest.Unknown, "not asked", "the agent declared no shell tool the scripted model can drive (its tools: " + strings.Join(tools, ", ") + ")"
		}
		return selftest.Unknown, "not asked", "the agent ended before the scripted model asked for this step"
	case !returned:
		return selftest.Unknown, "no tool result", "the agent never returned the command's result: it did not run it"
	}
	for name, v := range t.watched {
		if strings.Contains(out, v) {
			return selftest.Allow, "leaked", "the tool output holds the " + name
		}
	}
	m, ok := scripted.FindMarker(out, e.name)
	if !ok {
		return selftest.Unknown, "no marker", "the tool's output has no " + scripted.MarkerPrefix + " line for this step"
	}
	return judgeMarker(e, m, out)
}

// judgeMarker is the decision of a marker line: an attempt that exited 0
// did what it tried.
func judgeMarker(e escape, m scripted.Marker, out string) (selftest.Decision, string, string) {
	errno := errnoName(out)
	detail := fmt.Sprintf("rc=%d out=%s", m.RC, m.Fields["out"])
	switch {
	case e.name == "print-env":
		if m.Fields["out"] != "canary_vars_0" {
			return selftest.Allow, "canary variable present", detail
		}
		return selftest.Deny, "no canary, no real key", detail
	case e.name == "kernel-module" && errno == "EBADF":
		return selftest.Allow, "EBADF", "finit_module reached the kernel's fd check: " + detail
	case m.RC == 0:
		return selftest.Allow, "succeeded", detail
	case m.RC > 0:
		if errno == "" {
			errno = "exit " + fmt.Sprint(m.RC)
		}
		return selftest.Deny, errno, detail
	}
	return selftest.Unknown, "no exit code", detail
}

// hostCheck looks from the host at what an attempt would leave: a file in
// /etc, the control's file in the workspace. It returns why the attempt
// is ALLOW by what the host sees, or "".
func (t *agentTest) hostCheck(e escape) string {
	switch e.name {
	case "etc-write":
		if _, err := os.Lstat(e.target); err == nil {
			os.Remove(e.target)
			return "the host's " + e.target + " was written"
		}
	}
	return ""
}

// workspaceWritten reports whether the control's file is in the host's
// workspace with the run's token. The agent wrote it: it is read through
// the workspace's fd, never through a link, and a FIFO does not block.
func (t *agentTest) workspaceWritten(path string) bool {
	b, err := workspace.ReadEntry(filepath.Dir(path), filepath.Base(path), 4096)
	return err == nil && strings.TrimSpace(string(b)) == t.env.token
}

// deniedBy names the denial log's first entry for syscall.
func deniedBy(syscall string, denials []ledger.Denial) string {
	if syscall == "" {
		return ""
	}
	for _, d := range denials {
		if d.Syscall == syscall {
			// Args and Comm are the agent's bytes: printable only.
			return fmt.Sprintf("%s %s %s (pid %d %s)", d.Layer, d.Syscall, ledger.Printable(d.Args), d.PID, ledger.Printable(d.Comm))
		}
	}
	return ""
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
