package launcher

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentbox/agentbox/account"
	"github.com/agentbox/agentbox/policy"
	"github.com/agentbox/agentbox/selftest"
)

// On darwin the only isolation is the dedicated account _agentbox
// (docs/dedicated-user.md): a run without --isolation chooses it, and says
// so. The commands of that engine are engine/userengine's MacRun (rendered
// by pure functions, golden-tested on Linux); this recipe checks the
// account and then refuses, since the launch itself (the gateway's
// loopback relay and the probes as the account, which agentbox-init does
// on Linux) is not wired on darwin yet. Cross-compiled only: never run on
// a Mac.

// userRun is what an --isolation user run holds; on darwin, the account.
type userRun struct {
	acct account.Account
}

// release has nothing to give back on darwin.
func (u *userRun) release() {}

// chooseUser makes user isolation the run's on darwin, saying so when the
// policy did not ask for it, and reads the account's facts.
func (pl *planned) chooseUser() error {
	var note string
	if pl.policy, note = darwinIsolation(pl.policy); note != "" {
		pl.run.Target = policy.TargetOf(pl.policy)
		if !pl.l.cfg.JSON {
			fmt.Fprintln(pl.l.out, note)
		}
	}
	a, err := account.LookupDarwin(context.Background(), account.DarwinName)
	if errors.Is(err, account.ErrNoAccount) {
		return nil // Resolve refuses with the fix (agentbox setup-user)
	}
	if err != nil {
		return err
	}
	pl.host.Account = &policy.UserAccount{Name: a.Name, UID: uint32(a.UID), GID: uint32(a.GID), Home: a.Home}
	pl.run.GatewayPort = policy.GatewayPort
	if !pl.dry {
		pl.run.GatewayPort, err = freeLoopbackPort()
	}
	return err
}

// userSteps are the Prepare stage for TargetUser on darwin: the account's
// checks, then the refusal of a launch this build cannot make yet.
func (p *prepared) userSteps(_ context.Context) []namedStep {
	if p.dry {
		return []namedStep{{"render", func() error {
			return &policy.InputError{Field: "--isolation", Msg: "agentbox spec renders an OCI runtime's spec, and --isolation user runs none", Fix: "agentbox setup-user --dry-run --os darwin prints the account's plan"}
		}}}
	}
	p.user = &userRun{}
	return []namedStep{
		{"account", p.checkDarwinAccount},
		{"launch", func() error {
			return &policy.HostError{
				What: "on macOS agentbox renders the account's commands (sudo -u _agentbox sandbox-exec, chmod +a, the pf anchor, the kill loop: engine/userengine MacRun) but does not launch an agent yet: the gateway's loopback relay and the self-test as the account run in agentbox-init, which is Linux's",
				Fix:  "run agentbox on Linux (sudo agentbox run --isolation user -- CMD works there without namespaces)",
			}
		}},
	}
}

// checkDarwinAccount refuses when the account could read the invoker's
// home or root's.
func (p *prepared) checkDarwinAccount() error {
	a, err := account.LookupDarwin(context.Background(), account.DarwinName)
	if err != nil {
		return err
	}
	p.user.acct = a
	for _, home := range []string{p.host.Home, "/var/root"} {
		acc := account.Reach(account.Host, a, home, account.Read)
		if acc.Allowed != account.No {
			return &refusal{fmt.Sprintf("the account %s may read %s (%s: %s); fix: chmod 0700 %s, then check with: agentbox audit --user %s", a.Name, home, acc.Allowed, acc.Why, home, a.Name)}
		}
	}
	return nil
}

// bridgeSocket is the gateway's socket on the host.
func (p *prepared) bridgeSocket() string { return p.plan.GatewaySocket }

// userInit has nothing to add on darwin: no init runs there.
func (p *prepared) userInit(*selftest.InitConfig) {}
