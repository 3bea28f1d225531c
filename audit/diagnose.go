package audit

import (
	"fmt"
	"io"
)

// WriteDiagnose writes, for each finding, the incident-note shape: Symptom,
// Evidence (the audit line), Fault, Fix (the single change), Proof (the probe
// to re-run) and Residual.
func WriteDiagnose(w io.Writer, r Report) error {
	t := &textWriter{w: w}
	n := 0
	for _, c := range r.Containers {
		for _, f := range c.Findings {
			if n > 0 {
				t.printf("\n")
			}
			n++
			diagnoseOne(t, c.Name, f)
		}
	}
	if n == 0 {
		t.printf("No findings: nothing to diagnose.\n")
	}
	return t.err
}

func diagnoseOne(t *textWriter, name string, f Finding) {
	rule := catalog[f.Code]
	status := string(f.Severity)
	switch {
	case f.Accepted:
		status += ", accepted: " + f.AcceptedReason
	case f.Unknown:
		status += ", unknown"
	}
	t.printf("%s: %s (%s)\n", name, f.Code, status)
	t.printf("  Symptom:  %s\n", rule.Symptom)
	t.printf("  Evidence: %s%s\n", evidenceLine(f), atLocation(f.Location))
	t.printf("  Fault:    %s: %s\n", f.Subject, f.Detail)
	t.printf("  Fix:      %s\n", f.Fix)
	t.printf("  Proof:    %s\n", proof(rule))
	t.printf("  Residual: %s\n", rule.Residual)
}

func evidenceLine(f Finding) string {
	if f.Evidence != "" {
		return f.Evidence
	}
	return fmt.Sprintf("%s %s", f.Code, f.Subject)
}

// proof says how to show the fix worked.
func proof(r Rule) string {
	if r.Probe == "" {
		return "re-run agentbox audit: no self-test probe observes this from inside"
	}
	return "re-run the self-test probe " + r.Probe + " (agentbox selftest), then agentbox audit"
}
