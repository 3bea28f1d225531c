package launcher

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/agentbox/agentbox/audit"
	"github.com/agentbox/agentbox/ledger"
	"github.com/agentbox/agentbox/policy"
	"github.com/agentbox/agentbox/selftest"
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

// record is the Record stage's value: the run's ledger record, made from
// each stage's value the run reached.
func (l *launch) record(start time.Time, o outcome, td tornDown) ledger.Record {
	p := o.p
	kind := ledger.KindRun
	if l.cfg.ProbesOnly {
		kind = ledger.KindSelftest
	}
	rec := ledger.Record{
		RunID: p.run.ID, Kind: kind, Start: start, End: time.Now().UTC(), Command: l.argv(),
		Teardown: &td.teardown, ExitCode: o.exit, Gateway: td.gateway, Notes: l.terminalNote(p),
	}
	if plan := p.plan; plan != nil {
		for _, r := range plan.Residuals {
			rec.Residuals = append(rec.Residuals, ledger.Residual{Code: r.Code, Detail: r.Reason})
		}
		if a := plan.Agent; a.Name != "" && a.Name != "generic" {
			rec.Agent = a.Name
		}
		rec.PermissionMode = plan.Agent.Permission.Mode
		rec.Binds = ledgerBinds(plan.Mounts)
	}
	for _, src := range p.sources {
		rec.PolicySources = append(rec.PolicySources, ledger.PolicySource{Path: src.Path, Kind: string(src.Kind), Digest: src.Digest})
	}
	d := o.digests
	if d == nil {
		d = digestsOf(p)
	}
	<-d.done
	rec.Digests.Policy, rec.Digests.Spec, rec.Digests.Seccomp = d.policy, d.spec, d.seccomp
	rec.Findings = LedgerFindings(p.findings)
	rec.Probes = ledgerProbes(o.v.all())
	rec.HostVerification = hostVerification(o.v.host, o.h.landlock)
	p.advice.record(&rec)
	if p.engineNote != "" && rec.HostVerification != nil {
		rec.HostVerification["engine"] = p.engineNote
	}
	p.denials.record(&rec)
	l.cfg.agentTest.judge(&rec, p) // agenttest.go; nil for any other run
	for _, probe := range slices.Sorted(maps.Keys(l.cfg.AllowUnknown)) {
		rec.Residuals = append(rec.Residuals, ledger.Residual{Code: "probe-unknown-accepted", Detail: probe + ": " + l.cfg.AllowUnknown[probe]})
	}
	var wsRes []ledger.Residual
	rec.Workspace, wsRes = workspaceRecord(p.ws, td.ws)
	rec.Residuals = append(rec.Residuals, wsRes...)
	if o.err != nil {
		rec.Error = o.err.Error()
	}
	return rec
}

// ledgerBinds lists the plan's binds beyond its root and workspace: the
// command's closure and the policy's extra binds, with why each is there.
func ledgerBinds(ms []policy.Mount) []ledger.Bind {
	var out []ledger.Bind
	for _, m := range ms {
		if m.Kind == policy.KindInstall || m.Kind == policy.KindExtra {
			out = append(out, ledger.Bind{Source: m.Source, Kind: string(m.Kind), ReadOnly: m.ReadOnly, Why: m.Why})
		}
	}
	return out
}

// terminalNote says, for the record and the user, what the terminal filter
// kept from the user's terminal, or that it was off.
func (l *launch) terminalNote(p *prepared) string {
	switch {
	case p.sess == nil || l.cfg.ProbesOnly:
		return ""
	case l.cfg.RawTerminal:
		return "terminal filter off (--raw-terminal)"
	}
	d := p.sess.Dropped()
	if d.Total() == 0 {
		return ""
	}
	note := fmt.Sprintf("terminal filter removed %d sequence(s) the agent wrote: %s", d.Total(), d)
	fmt.Fprintf(l.out, "agentbox: %s (agentbox run --raw-terminal lets them through)\n", note)
	return note
}

// hostVerification names what the launcher observed from outside.
func hostVerification(host []selftest.Result, ll *selftest.LandlockStatus) map[string]string {
	hv := map[string]string{}
	for _, r := range host {
		hv[r.Probe] = string(r.Decision) + ": " + r.Observed
	}
	if ll != nil {
		hv["landlock"] = fmt.Sprintf("abi %d, fs %v, net %v, scoped %v", ll.ABI, ll.FS, ll.Net, ll.Scoped)
	}
	if len(hv) == 0 {
		return nil
	}
	return hv
}

// recordDigests are the record's digests of what does not change once
// the sandbox runs: the policy, the bundle's spec and its seccomp profile
// (each empty where the launch did not get that far).
type recordDigests struct {
	done                  chan struct{} // closed once they are computed
	policy, spec, seccomp string
}

// digestAhead computes p's record digests on a goroutine: a run starts
// it once the agent runs, and its JSON and hashing (about a millisecond)
// happen while the agent runs instead of after it.
func digestAhead(p *prepared) *recordDigests {
	d := &recordDigests{done: make(chan struct{})}
	go d.compute(p)
	return d
}

// digestsOf computes p's record digests now.
func digestsOf(p *prepared) *recordDigests {
	d := &recordDigests{done: make(chan struct{})}
	d.compute(p)
	return d
}

func (d *recordDigests) compute(p *prepared) {
	defer close(d.done)
	if p.plan != nil {
		d.policy = digestJSON(p.policy)
	}
	if s := p.bundleSpec(); s != nil {
		d.spec = digestJSON(s)
		if s.Linux != nil {
			d.seccomp = digestJSON(s.Linux.Seccomp)
		}
	}
}

func digestJSON(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}
