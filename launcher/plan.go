package launcher

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"

	"github.com/agentbox/agentbox/engine"
	"github.com/agentbox/agentbox/host"
	"github.com/agentbox/agentbox/ledger"
	"github.com/agentbox/agentbox/netpolicy"
	"github.com/agentbox/agentbox/policy"
	"github.com/agentbox/agentbox/selftest"
	"github.com/agentbox/agentbox/userns"
)

// planned is the Plan stage's value: what the pure prefix of the recipe
// (policy, host, workspace, inputs, plan, evidence) read and decided.
// Nothing of it exists outside this process yet; `agentbox spec` renders
// from it and stops.
type planned struct {
	l *launch
	// dry is agentbox spec: placeholders for the run's values, no canary.
	dry     bool
	policy  policy.Policy
	sources []policy.Loaded
	dirs    Dirs
	host    policy.Host
	// hostIDs are /etc/subuid and /etc/subgid: agentbox's slots as root,
	// the user's own ranges (host.SubIDs) rootless.
	hostIDs userns.HostIDs
	initBin initBinary
	ws      workspaceSnapshot
	// run is what the plan is for: the run's id, directory, bundle and
	// gateway token, chosen before planning.
	run policy.Run
	// canary are the canaries' names and values, chosen with the run.
	canary canaryPlan
	plan   *policy.Plan
	// engineNote names the engine the policy chose and why, for the
	// record; empty when the caller gave the engine.
	engineNote string
}

// planSteps are the recipe's pure prefix: each reads and decides, and
// none makes anything outside this process.
func (pl *planned) planSteps() []namedStep {
	return []namedStep{
		{name: "policy", run: pl.loadPolicy},
		{name: "host", run: pl.captureHost},
		{name: "workspace", run: pl.inspectWorkspace},
		{name: "inputs", run: pl.chooseRun},
		{name: "plan", run: pl.resolvePlan},
		{name: "evidence", run: pl.checkEvidence},
	}
}

func (pl *planned) loadPolicy() error {
	var err error
	if pl.policy, pl.sources, err = LoadPolicy(pl.l.cfg.Policy, pl.l.cfg.Sources); err != nil {
		return err
	}
	return pl.openEngine() // engines.go
}

// captureHost reads the host's facts: host.Capture's, the directories
// (checked, not made), where agentbox-init will be reachable, the
// subordinate ids and the Landlock ABI.
func (pl *planned) captureHost() error {
	cfg := pl.l.cfg
	// The launcher's process environment: the plan's allowlist decides
	// what of it crosses (chooseRun adds the env canary to it).
	environ := cfg.Environ
	if environ == nil {
		environ = os.Environ()
	}
	h, err := host.Capture(environ)
	if err != nil {
		return err
	}
	if pl.dirs = cfg.Dirs; pl.dirs.isZero() {
		if pl.dirs, err = FindDirs(cfg.getenv); err != nil {
			return err
		}
	}
	pl.dirs.euid = os.Geteuid()
	if err := pl.dirs.check(); err != nil {
		return err
	}
	bin := cfg.InitPath
	if bin == "" {
		if bin, err = findInit(cfg.getenv); err != nil { // user.go, user_darwin.go
			return err
		}
	}
	if pl.initBin, err = locateInit(bin, pl.dirs.RunRoot); err != nil {
		return err
	}
	h.InitPath, h.LandlockABI = pl.initBin.reach, selftest.LandlockABI()
	if pl.hostIDs, err = userns.ReadHostIDs("/etc"); err != nil {
		return err
	}
	h.SubIDs = subIDs(pl.hostIDs, h.EUID)
	h.Runtimes, h.HybridCgroup = installedRuntimes(pl.dirs.RunRoot), engine.HybridCgroup()
	pl.host = h
	return nil
}

// subIDs are the invoking user's subordinate-id facts.
func subIDs(ids userns.HostIDs, euid uint32) policy.SubIDs {
	name := userName(euid)
	s := policy.SubIDs{User: name, NewIDMap: userns.HaveNewIDMap()}
	if u := userns.Owned(ids.SubUIDs, name, euid); len(u) > 0 {
		s.UID = policy.IDRange{Start: u[0].Start, Count: u[0].Count}
	}
	if g := userns.Owned(ids.SubGIDs, name, euid); len(g) > 0 {
		s.GID = policy.IDRange{Start: g[0].Start, Count: g[0].Count}
	}
	return s
}

func userName(uid uint32) string {
	name := strconv.FormatUint(uint64(uid), 10)
	if u, err := user.LookupId(name); err == nil {
		return u.Username
	}
	return name
}

// chooseRun chooses the run's values before planning: its id, run
// directory and bundle, the per-run gateway token and the canaries. Dry,
// they are placeholders that show where a run's go.
func (pl *planned) chooseRun() error {
	id, token := policy.RunIDPlaceholder, policy.GatewayTokenPlaceholder
	if !pl.dry {
		var err error
		id = ledger.NewRunID()
		if token, err = netpolicy.NewToken(); err != nil {
			return err
		}
		pl.canary = newCanaryPlan(id)
		pl.host.Environ = append(pl.host.Environ, pl.canary.env())
		if pl.ws.root != "" {
			pl.host.WorkspaceSockets = append(pl.host.WorkspaceSockets, pl.canary.socket)
		}
	}
	dir := policy.RunDir(pl.dirs.RunRoot, id)
	pl.run = policy.Run{ID: id, Dir: dir, Bundle: filepath.Join(dir, "bundle"), GatewayToken: token, Target: policy.TargetOf(pl.policy)}
	return pl.chooseUser() // user.go
}

func (pl *planned) resolvePlan() error {
	plan, err := policy.Resolve(pl.policy, pl.l.argv(), pl.host, pl.run)
	if err != nil {
		return err
	}
	pl.plan = plan
	pl.sayResiduals()
	return nil
}

// sayResiduals tells the user, before anything runs, which layers this
// host or this policy makes weaker; the ledger records them too. With
// JSON they are in the run's record instead.
func (pl *planned) sayResiduals() {
	if pl.l.cfg.JSON || pl.dry {
		return
	}
	for _, r := range pl.plan.Residuals {
		fmt.Fprintf(pl.l.out, "agentbox: residual %s: %s\n", r.Code, r.Reason)
	}
}
