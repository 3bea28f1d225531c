package ledger

import "strconv"

// workspace prints what the launcher found in the workspace. Paths and
// values are the agent's: each is quoted, so that no byte of it reaches
// the terminal raw.
func (p *printer) workspace(w *Workspace) {
	if w == nil || len(w.Sockets)+len(w.Leftovers)+len(w.Capped) == 0 {
		return
	}
	p.section("workspace")
	for _, s := range w.Sockets {
		p.line("  socket at launch (covered)  %s", strconv.QuoteToASCII(s))
	}
	for _, l := range w.Leftovers {
		what := l.Kind
		if l.Key != "" {
			what += " " + l.Key + " = " + strconv.QuoteToASCII(l.Value)
		}
		p.line("  LEFT %-8s %s  %s", l.Change, strconv.QuoteToASCII(l.Path), what)
	}
	for _, c := range w.Capped {
		p.line("  capped: %s", strconv.QuoteToASCII(c))
	}
}
