package launcher

import (
	"time"

	"github.com/agentbox/agentbox/audit"
	"github.com/agentbox/agentbox/ledger"
)

// AuditRecord is the Record stage of an audit that builds no sandbox
// (agentbox audit, compose's self-audit and compose --check): a record of
// kind audit with every finding of every container, its subject prefixed
// with the container's name, accepted ones included.
func AuditRecord(command []string, start time.Time, r audit.Report, code int, note string) ledger.Record {
	rec := ledger.Record{
		RunID: ledger.NewRunID(), Kind: ledger.KindAudit, Start: start, End: time.Now().UTC(),
		Command: command, ExitCode: code, Notes: note,
	}
	for _, c := range r.Containers {
		for _, f := range LedgerFindings(c.Findings) {
			f.Subject = c.Name + ": " + f.Subject
			rec.Findings = append(rec.Findings, f)
		}
	}
	return rec
}

// AppendRecord appends rec to the ledger in the state directory that
// getenv names (FindDirs).
func AppendRecord(getenv func(string) string, rec ledger.Record) error {
	d, err := FindDirs(getenv)
	if err != nil {
		return err
	}
	return d.Ledger().Append(rec)
}
