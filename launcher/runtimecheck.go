package launcher

import (
	"context"
	"fmt"
	"io"
	"strings"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/agentbox/agentbox/audit"
	"github.com/agentbox/agentbox/doctor"
	"github.com/agentbox/agentbox/engine"
	"github.com/agentbox/agentbox/engine/advisory"
	"github.com/agentbox/agentbox/ledger"
	"github.com/agentbox/agentbox/policy"
)

// AnnotationPrefix starts the spec annotation that carries one advisory
// verdict: org.agentbox.advisory.runc-CVE-2025-31133 is
// "affected-not-exposed (high severity): …". `agentbox spec` shows them;
// the bundle's config.json carries them to the runtime, which ignores them.
const AnnotationPrefix = "org.agentbox.advisory."

// runtimeAdvice is what the runtime step found: the runtime as read from
// the host, the mode, and the advisory table's verdicts for it.
type runtimeAdvice struct {
	rt       doctor.RuntimeFacts
	choice   string // who chose the runtime and why (policy.Runtime)
	mode     advisory.Mode
	findings []advisory.Finding
}

// checkRuntime is the step that judges the runtime the plan chose, for the
// way this sandbox is launched, with the judgement `agentbox doctor`
// reports (advisory.Judge). Reading the runtime is its side effect: it runs
// `RUNTIME --version` and asks the package manager which package installed
// the binary, as doctor does. An exposed finding becomes a
// runtime-vulnerable finding of the self-audit, which refuses the launch
// unless the policy accepts it; a residual one (affected but not exposed
// in this mode, or low severity) is said before the launch and recorded as
// a residual; every verdict is a spec annotation and a host verification
// entry of the record.
func (p *prepared) checkRuntime(ctx context.Context) error {
	if p.plan.Runtime.Path == "" {
		return nil // the engine's own runtime (compose): not agentbox's to run
	}
	t, err := advisory.Load()
	if err != nil {
		return err
	}
	a := &p.advice
	a.rt = inspectRuntimeCached(ctx, p.dirs.RunRoot, p.plan.Runtime.Name, p.plan.Runtime.Path, !p.dry)
	a.choice = p.plan.Runtime.Chosen + ": " + p.plan.Runtime.Reason
	if p.plan.Runtime.Name == "runsc" {
		if err := engine.CheckRunsc(ctx, p.plan.Runtime.Path, a.rt.Version); err != nil {
			return WithKind(KindHost, err)
		}
	}
	a.mode = LaunchMode(p.plan)
	a.findings = advisory.Judge(t, a.rt.Advisory(), doctor.ReadOS(doctor.Live()).Distro(), a.mode)
	for _, f := range a.findings {
		annotate(p.spec, f)
	}
	if !p.l.cfg.JSON && !p.dry {
		a.sayResiduals(p.l.out)
	}
	return nil
}

// sayResiduals tells the user, in one line per kind, which advisories of
// the runtime remain for this launch; each is in the run's record with its
// full reason, and `agentbox doctor` explains it.
func (a runtimeAdvice) sayResiduals(w io.Writer) {
	var hidden, low []string
	for _, f := range a.findings {
		switch {
		case !f.Residual():
		case f.Verdict == advisory.NotExposed:
			hidden = append(hidden, f.Key)
		default:
			low = append(low, f.Key)
		}
	}
	if len(hidden) > 0 {
		fmt.Fprintf(w, "agentbox: residual runtime: %s lacks %d fixes that the %s mode does not expose (%s); the run's record has each reason, `agentbox doctor` too\n",
			a.evidenceRuntime(), len(hidden), a.mode.Name(), strings.Join(hidden, ", "))
	}
	if len(low) > 0 {
		fmt.Fprintf(w, "agentbox: residual runtime: %s lacks %d low-severity fixes (%s); the run's record has each reason, `agentbox doctor` too\n",
			a.evidenceRuntime(), len(low), strings.Join(low, ", "))
	}
}

// LaunchMode is how a plan launches, as the advisory table's conditions
// see it: with --rootfs or the default root, rootless or not, and in a
// user namespace that does not map host root, which every id-map mode but
// the engine's is (a slot of agentbox's ranges as root; the user's own ids,
// never host root, rootless). agentbox never uses the runtime's exec.
func LaunchMode(p *policy.Plan) advisory.Mode {
	m := p.Identity.IDMap.Mode
	return advisory.Mode{Rootfs: p.Rootfs.Image != "", UserNS: m != "" && m != policy.IDEngine, Rootless: p.Identity.Rootless}
}

// annotate records one verdict in the spec.
func annotate(s *specs.Spec, f advisory.Finding) {
	if s.Annotations == nil {
		s.Annotations = map[string]string{}
	}
	s.Annotations[AnnotationPrefix+f.Key] = f.Reason()
}

// refusals are the findings that refuse the launch, for the self-audit,
// which applies the policy's acceptances to them.
func (a runtimeAdvice) refusals() []audit.RuntimeAdvisory {
	var out []audit.RuntimeAdvisory
	for _, f := range a.findings {
		if f.Blocks() {
			out = append(out, audit.RuntimeAdvisory{
				Subject: f.Key, Detail: f.Reason(), Fix: f.Fix, Unknown: f.Verdict == advisory.Undetermined, Evidence: a.evidence(),
			})
		}
	}
	return out
}

// evidence says what the verdicts were made from.
func (a runtimeAdvice) evidence() string {
	return a.evidenceRuntime() + ", mode " + a.mode.Name()
}

// evidenceRuntime names the runtime as it was read: version, path, package.
func (a runtimeAdvice) evidenceRuntime() string {
	s := fmt.Sprintf("%s %s at %s", a.rt.Name, orUnknown(a.rt.Version), a.rt.Path)
	if p := a.rt.Package; p != nil {
		s += fmt.Sprintf(", package %s %s (%s)", p.Name, p.Version, p.Manager)
	}
	return s
}

func orUnknown(s string) string {
	if s == "" {
		return "(version unknown)"
	}
	return s
}

// record adds the runtime step's part to the run's record: each residual
// finding as a residual (code RUNTIME-CVE-…), and the runtime and every
// verdict in the host verification, keyed as doctor keys its checks.
func (a runtimeAdvice) record(rec *ledger.Record) {
	if a.rt.Name == "" {
		return
	}
	if rec.HostVerification == nil {
		rec.HostVerification = map[string]string{}
	}
	rec.HostVerification["runtime"] = a.evidence()
	if a.choice != "" {
		rec.HostVerification["runtime-choice"] = a.choice
	}
	for _, f := range a.findings {
		rec.HostVerification[f.Key] = f.Reason()
		if f.Residual() {
			rec.Residuals = append(rec.Residuals, ledger.Residual{Code: f.Key, Detail: f.Reason()})
		}
	}
}

// noteSelfTest keeps the verdict of this run's self-test for the runtime
// binary that ran it (storeSelfTest), which the next plans choose their
// default runtime by (policy.ChooseRuntime). A pass is kept whoever chose
// the runtime; a failure only where agentbox chose it by default, so that
// a runtime asked for by name never changes the default. Nothing is kept
// of a sandbox a test weakened on purpose, or of one another engine ran
// (containerd's shim runs the runtime its own way).
func (p *prepared) noteSelfTest(failed int) {
	cfg := p.l.cfg
	if _, cli := p.eng.(engine.Runtime); !cli || p.dry || cfg.Weaken != nil || cfg.WeakenInit != nil || cfg.agentTest != nil {
		return
	}
	v := policy.SelfTestPassed
	if failed > 0 {
		if p.plan.Runtime.Chosen != policy.ChosenDefault {
			return
		}
		v = policy.SelfTestFailed
	}
	storeSelfTest(p.dirs.RunRoot, p.plan.Runtime.Name, p.plan.Runtime.Path, v, p.run.ID)
}
