package audit

import (
	"fmt"
	"path/filepath"

	"github.com/agentbox/agentbox/policy"
)

// Check is one named check over the model. Run returns the check's findings
// for one container; it reads only the model and the options. Codes are the
// finding codes it may report, as runc's validators name what they reject;
// a test holds every check to them and every catalog code to a check.
type Check struct {
	Name  string
	Codes []string
	Run   func(c *Container, o *Options) []Finding
}

// checks is the ordered list of checks whose findings fail an audit. The
// same list audits agentbox's own spec before launch and someone else's
// container.
var checks = []Check{
	{"mounts", []string{CodeContainerSocket, CodeHostRoot, CodeHomeDirectory, CodeSystemDirectory, CodeExtraWritable}, checkMounts},
	{"engine-address", []string{CodeContainerSocket}, checkEngineEnv},
	{"secret-in-environment", []string{CodeSecretInEnv}, checkSecretEnv},
	{"host-network-mode", []string{CodeHostNetwork}, checkHostNetwork},
	{"network-policy-not-applied", []string{CodeNetworkPolicy}, checkNetworkPolicy},
	{"runs-as-root", []string{CodeRunsAsRoot}, checkRoot},
	{"privileged-container", []string{CodePrivileged}, checkPrivileged},
	{"writable-root-filesystem", []string{CodeWritableRoot}, checkReadOnlyRoot},
	{"capabilities", []string{CodeCapsAdded, CodeCapsNotDropped, CodeInitCaps}, checkCaps},
	{"new-privileges-allowed", []string{CodeNewPrivileges}, checkNoNewPrivileges},
	{"no-resource-limits", []string{CodeNoLimits}, checkLimits},
	{"seccomp", []string{CodeSeccompUnconfined, CodeSeccompWeak}, checkSeccomp},
	{"apparmor-unconfined", []string{CodeAppArmor}, checkAppArmor},
	{"selinux-unconfined", []string{CodeSELinux}, checkSELinux},
	{"proc-masks-removed", []string{CodeProcMasks}, checkProcMasks},
	{"host-namespaces", []string{CodeHostPID, CodeHostIPC, CodeHostUTS}, checkHostNamespaces},
	{"devices-mounted", []string{CodeDevices}, checkDevices},
	{"sysctls-set", []string{CodeSysctls}, checkSysctls},
	{"runtime-vulnerable", []string{CodeRuntimeVulnerable}, checkRuntimeAdvisories},
	{"service-account-token", []string{CodeServiceAccountToken}, checkServiceAccountToken},
}

// warnChecks is the ordered list of warn-only checks: their findings are
// informational (auto-approve is raised afterwards when other faults exist).
var warnChecks = []Check{
	{"user-namespace-not-used", []string{CodeNoUserNS}, checkUserNS},
	{"auto-approve-permission-mode", []string{CodeAutoApprove}, checkAutoApprove},
}

// Checks returns the ordered list of checks whose findings fail an audit.
func Checks() []Check { return append([]Check(nil), checks...) }

// WarnChecks returns the ordered list of warn-only checks.
func WarnChecks() []Check { return append([]Check(nil), warnChecks...) }

// Audit runs every check over every container and returns the report, in
// input order.
func Audit(cs []Container, opts Options) Report {
	o := opts.normalized()
	r := Report{Containers: make([]ContainerReport, 0, len(cs))}
	for i := range cs {
		oc := o
		var notes []string
		w, note := labeledWorkspace(&cs[i], &o)
		switch {
		case w != "":
			cs[i].LabeledWorkspace, oc.Workspaces = w, []string{w}
		case note != "":
			notes = append(notes, note)
		default:
			if w := presumeWorkspace(&cs[i], &o); w != "" {
				cs[i].PresumedWorkspace, oc.Workspaces = w, []string{w}
			}
		}
		fs, ignored := auditOne(&cs[i], &oc)
		r.Containers = append(r.Containers, ContainerReport{
			Name:           cs[i].Name,
			Source:         cs[i].Source,
			File:           cs[i].File,
			Profiles:       cs[i].Profiles,
			Findings:       fs,
			PermissionMode: permissionOf(&cs[i]),
			Notes:          append(notes, ignored...),
			Model:          cs[i],
		})
	}
	return r
}

// auditOne runs the checks, then the warn-only checks, applies accepted
// residuals, raises auto-approve when anything else fails, and last gives
// the informational findings the container's accept labels explain their
// reason. It returns the findings and a note for each accept label that
// named a failing finding, which labels cannot accept.
func auditOne(c *Container, o *Options) ([]Finding, []string) {
	fs := []Finding{}
	for _, ch := range checks {
		fs = append(fs, ch.Run(c, o)...)
	}
	for _, ch := range warnChecks {
		fs = append(fs, ch.Run(c, o)...)
	}
	kubeFindings(c, fs)
	accept(fs, o.Accept)
	raiseAutoApprove(fs, o.Accept)
	ignored := acceptNotes(fs, c.LabelAccepts)
	sortFindings(fs)
	return fs, ignored
}

// acceptNotes accepts, with the label's reason, the informational findings
// an accept label covers. A label is written by whoever wrote the
// container, so a finding that fails stays failing; the returned notes name
// each label that tried.
func acceptNotes(fs []Finding, as []policy.Acceptance) []string {
	var ignored []string
	seen := map[string]bool{}
	for i := range fs {
		a, ok := policy.Accepting(as, fs[i].Code, fs[i].Subject)
		switch {
		case !ok || fs[i].Accepted:
		case fs[i].Severity == Info:
			fs[i].Accepted = true
			fs[i].AcceptedReason = a.Reason + " (label " + policy.AcceptLabel(a.Code) + ")"
		case !seen[a.Code]:
			seen[a.Code] = true
			ignored = append(ignored, fmt.Sprintf("label %s is ignored: a container's own label accepts informational findings only; accept %s with --accept or in %s", policy.AcceptLabel(a.Code), a.Code, policy.FileName))
		}
	}
	return ignored
}

// accept marks the findings an acceptance with a reason covers.
func accept(fs []Finding, as []policy.Acceptance) {
	for i := range fs {
		if a, ok := policy.Accepting(as, fs[i].Code, fs[i].Subject); ok && a.Reason != "" {
			fs[i].Accepted, fs[i].AcceptedReason = true, a.Reason
		}
	}
}

// raiseAutoApprove makes auto-approve high when any other finding fails: it
// multiplies every other fault.
func raiseAutoApprove(fs []Finding, as []policy.Acceptance) {
	others := false
	for _, f := range fs {
		if f.Code != CodeAutoApprove && f.Fails() {
			others = true
		}
	}
	if !others {
		return
	}
	for i := range fs {
		if fs[i].Code == CodeAutoApprove {
			fs[i].Severity = High
			fs[i].Detail += "; raised to high because other faults were found"
		}
	}
	accept(fs, as)
}

// newFinding builds a finding with the catalog's severity, fix and probe.
func newFinding(code, subject, detail string, loc Location) Finding {
	r := catalog[code]
	return Finding{
		Code: code, Severity: r.Severity, Subject: subject, Detail: detail,
		Fix: r.Fix, Probe: r.Probe, Location: loc,
	}
}

// normalized returns a copy of o with cleaned paths; workspaces and homes
// are also resolved through symlinks where they exist on this host.
func (o Options) normalized() Options {
	n := o
	n.Workspaces = resolveAll(o.Workspaces)
	n.ReadOnlyPaths = resolveAll(o.ReadOnlyPaths)
	n.RuntimeFiles = resolveAll(o.RuntimeFiles)
	n.HomeDirs = resolveAll(o.HomeDirs)
	n.InternalNetworks = append([]string(nil), o.InternalNetworks...)
	return n
}

func resolveAll(ps []string) []string {
	var out []string
	for _, p := range ps {
		if p == "" {
			continue
		}
		c := cleanPath(p)
		out = append(out, c)
		if r, err := filepath.EvalSymlinks(c); err == nil && cleanPath(r) != c {
			out = append(out, cleanPath(r))
		}
	}
	return out
}
