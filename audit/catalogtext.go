package audit

import (
	"fmt"
	"io"
	"strings"
)

// WriteCatalog lists the finding catalog for people (agentbox audit
// --codes): each code with its severity and title, its fix and how to
// prove the fix, then how findings are tolerated.
func WriteCatalog(w io.Writer) error {
	for _, r := range Catalog() {
		proof := "self-test probe " + r.Probe
		if r.Probe == "" {
			proof = "re-run agentbox audit"
		}
		fmt.Fprintf(w, "%-30s %-8s %s\n", r.Code, r.Severity, r.Title)
		fmt.Fprintf(w, "%-30s %-8s fix: %s; proof: %s\n", "", "", r.Fix, proof)
	}
	fmt.Fprintln(w, strings.Repeat("-", 3))
	_, err := fmt.Fprintln(w, "Findings fail unless informational or accepted with --accept CODE=reason.")
	return err
}
