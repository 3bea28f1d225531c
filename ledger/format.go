package ledger

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"
)

// timeLayout is how records show times: UTC, to the second.
const timeLayout = "2006-01-02 15:04:05Z"

// commandWidth is how much of a command WriteTable shows.
const commandWidth = 40

// WriteTable writes recs as the table of `agentbox runs`: run id, start
// time, kind, command, exit code, the agent's denials and verdict, one row per record in the
// given order.
func WriteTable(w io.Writer, recs []Record) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN ID\tTIME\tKIND\tCOMMAND\tEXIT\tDENIALS\tVERDICT")
	for _, r := range recs {
		command := quoteArgs(r.Command)
		if command == "" {
			command = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\n", Printable(r.RunID), r.Start.UTC().Format(timeLayout),
			Printable(string(r.Kind)), truncate(command, commandWidth), r.ExitCode, r.DenialCount(), r.Verdict())
	}
	return tw.Flush()
}

// quoteArgs joins argv for display, quoting arguments that need it.
func quoteArgs(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if a == "" || strings.ContainsFunc(a, needsQuote) {
			a = strconv.Quote(a)
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}

// needsQuote reports whether c makes an argument ambiguous or unsafe to
// print as is (spaces, shell quoting characters, control characters).
func needsQuote(c rune) bool {
	return c == ' ' || strings.ContainsRune("\"'\\$`", c) || !strconv.IsPrint(c)
}

// Printable returns s as it is when every rune of it shows as itself on a
// terminal, and otherwise quoted as a Go string literal (strconv.Quote):
// newlines, carriage returns, tabs, escape sequences, other control and
// format characters (bidirectional overrides among them) and invalid UTF-8
// become visible
// escapes, so that a string the agent chose (a file name, a probe's
// observation, an error naming a path) cannot add lines to, or rewrite,
// what the reader sees. A string that starts with a double quote is quoted
// too, so that a quoted value always means an escaped one.
func Printable(s string) string {
	if s == "" || (utf8.ValidString(s) && !strings.HasPrefix(s, `"`) && !strings.ContainsFunc(s, func(c rune) bool { return !strconv.IsPrint(c) })) {
		return s
	}
	return strconv.Quote(s)
}

// safe is text already escaped (quoteArgs' output, lists of Printable
// items), which printer.line writes as it is.
type safe string

// list escapes each item and joins them with ", ".
func list(items []string) safe {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = Printable(it)
	}
	return safe(strings.Join(out, ", "))
}

func truncate(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// WriteRecord writes r for a human, as `agentbox show` prints it: a header
// of key facts, then one section per kind of evidence that the record has.
func WriteRecord(w io.Writer, r Record) error {
	p := &printer{w: w}
	p.header(r)
	p.findings(r.Findings)
	p.residuals(r.Residuals)
	p.probes(r.Probes)
	p.binds(r.Binds)
	p.hostVerification(r.HostVerification)
	p.denials(r.DenialLayers, r.Denials)
	p.teardown(r.Teardown)
	p.workspace(r.Workspace)
	if r.Error != "" {
		p.section("error")
		p.line("  %s", r.Error)
	}
	if r.Notes != "" {
		p.section("notes")
		p.line("  %s", r.Notes)
	}
	return p.err
}

// printer writes lines and keeps the first write error.
type printer struct {
	w   io.Writer
	err error
}

// line writes one line: format is agentbox's own, every string argument is
// escaped with Printable (a safe one is written as it is), so that nothing
// in a record makes a line break or a control sequence of its own.
func (p *printer) line(format string, args ...any) {
	if p.err != nil {
		return
	}
	for i, a := range args {
		switch v := a.(type) {
		case string:
			args[i] = Printable(v)
		case safe:
			args[i] = string(v)
		}
	}
	_, p.err = fmt.Fprintln(p.w, strings.TrimRight(fmt.Sprintf(format, args...), " "))
}

// field writes "name value" when value is not empty; value is a string or
// safe.
func (p *printer) field(name string, value any) {
	if value != "" && value != safe("") {
		p.line("%-12s %s", name, value)
	}
}

func (p *printer) section(title string) {
	p.line("")
	p.line("%s", title)
}

func (p *printer) header(r Record) {
	p.field("run", r.RunID)
	p.field("kind", string(r.Kind))
	p.field("started", r.Start.UTC().Format(timeLayout))
	if !r.End.IsZero() {
		p.field("ended", fmt.Sprintf("%s (%s)", r.End.UTC().Format(timeLayout), r.End.Sub(r.Start).Round(time.Millisecond)))
	}
	p.field("command", safe(quoteArgs(r.Command)))
	agent := safe(Printable(r.Agent))
	if r.PermissionMode != "" {
		agent = safe(strings.TrimSpace(string(agent) + " (permission mode: " + Printable(r.PermissionMode) + ")"))
	}
	p.field("agent", agent)
	p.field("exit code", strconv.Itoa(r.ExitCode))
	p.field("verdict", r.Verdict())
	p.field("policy", r.Digests.Policy)
	for _, src := range r.PolicySources {
		p.line("  from %s %s (%s)", src.Kind, src.Path, src.Digest)
	}
	p.field("spec", r.Digests.Spec)
	p.field("seccomp", r.Digests.Seccomp)
	if r.Gateway != (Gateway{}) {
		gw := fmt.Sprintf("%d allowed, %d denied", r.Gateway.Allowed, r.Gateway.Denied)
		if r.Gateway.LogDropped > 0 {
			gw += fmt.Sprintf(" (%d not in the decision log: it reached its cap)", r.Gateway.LogDropped)
		}
		p.field("gateway", gw)
	}
}

func (p *printer) binds(bs []Bind) {
	if len(bs) == 0 {
		return
	}
	p.section(fmt.Sprintf("binds (%d)", len(bs)))
	for _, b := range bs {
		mode := "rw"
		if b.ReadOnly {
			mode = "ro"
		}
		p.line("  %s %-7s %s", mode, b.Kind, b.Source)
		if b.Why != "" {
			p.line("           %s", b.Why)
		}
	}
}

func (p *printer) findings(fs []Finding) {
	if len(fs) == 0 {
		return
	}
	accepted := 0
	for _, f := range fs {
		if f.Accepted {
			accepted++
		}
	}
	p.section(fmt.Sprintf("findings (%d, %d accepted)", len(fs), accepted))
	for _, f := range fs {
		p.line("  %-8s %s  %s", f.Severity, f.Code, f.Subject)
		if f.Accepted {
			p.line("           accepted: %s", f.Reason)
		}
		if f.Detail != "" {
			p.line("           %s", f.Detail)
		}
		if f.Fix != "" && !f.Accepted {
			p.line("           fix: %s", f.Fix)
		}
	}
}

func (p *printer) residuals(rs []Residual) {
	if len(rs) == 0 {
		return
	}
	p.section("residuals")
	for _, r := range rs {
		p.line("  %s: %s", r.Code, r.Detail)
	}
}

func (p *printer) probes(ps []Probe) {
	if len(ps) == 0 {
		return
	}
	failed := 0
	for _, pr := range ps {
		if !pr.Passed() {
			failed++
		}
	}
	p.section(fmt.Sprintf("probes (%d, %d failed)", len(ps), failed))
	for _, pr := range ps {
		mark := "pass"
		if !pr.Passed() {
			mark = "FAIL"
		}
		p.line("  %s  %-28s expect %-5s got %-7s %s %s", mark, pr.Probe, pr.Expect, pr.Decision, pr.Target, pr.Observed)
	}
}

func (p *printer) hostVerification(hv map[string]string) {
	if len(hv) == 0 {
		return
	}
	p.section("host verification")
	keys := make([]string, 0, len(hv))
	for k := range hv {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		p.line("  %-12s %s", k, hv[k])
	}
}

func (p *printer) teardown(t *Teardown) {
	if t == nil {
		return
	}
	state := "clean"
	if !t.Clean() {
		state = "NOT CLEAN"
	}
	p.section("teardown: " + state)
	p.field("  decision", string(t.Decision))
	p.field("  errors", strings.Join(t.Errors, "; "))
	if len(t.SurvivingPIDs) > 0 {
		p.field("  pids", strings.Trim(fmt.Sprint(t.SurvivingPIDs), "[]"))
	}
	p.field("  mounts", list(t.RemainingMounts))
	p.field("  runtime", list(t.RuntimeStateLeft))
	p.field("  sockets", list(t.OpenSockets))
}
