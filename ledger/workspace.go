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
		p.line("  socket at launch (covered)  %s", quoted(s))
	}
	for _, l := range w.Leftovers {
		what := safe(Printable(l.Kind))
		if l.Key != "" {
			what += safe(" "+Printable(l.Key)+" = ") + quoted(l.Value)
		}
		p.line("  LEFT %-8s %s  %s", l.Change, quoted(l.Path), what)
	}
	for _, c := range w.Capped {
		p.line("  capped: %s", quoted(c))
	}
}

// quoted is s always quoted, in ASCII: every string of the workspace
// inspection is the agent's.
func quoted(s string) safe { return safe(strconv.QuoteToASCII(s)) }
