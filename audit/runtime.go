package audit

// RuntimeAdvisory is a known vulnerability of the OCI runtime that runs the
// container, exposed in the way the container is launched. The caller
// judges it (engine/advisory, for agentbox's own sandbox) and hands it in
// through Options; a configuration never says which runtime release runs it.
type RuntimeAdvisory struct {
	// Subject names the runtime and the vulnerability:
	// "runc-CVE-2025-31133"; an acceptance's subject matches it exactly.
	Subject string
	// Detail is the judgement in words, Fix the upgrade (or the command
	// that settles an undetermined version).
	Detail, Fix string
	// Unknown is true when the runtime's version could not be judged.
	Unknown bool
	// Evidence is what the judgement was made from ("runc 1.1.5+ds1,
	// package runc 1.1.5+ds1-1+deb12u1").
	Evidence string
}

// checkRuntimeAdvisories reports each exposed runtime vulnerability the
// caller found.
func checkRuntimeAdvisories(_ *Container, o *Options) []Finding {
	var out []Finding
	for _, a := range o.RuntimeAdvisories {
		f := newFinding(CodeRuntimeVulnerable, a.Subject, a.Detail, Location{})
		f.Fix, f.Unknown, f.Evidence = a.Fix, a.Unknown, a.Evidence
		out = append(out, f)
	}
	return out
}
