package userengine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/agentbox/agentbox/engine"
	"github.com/agentbox/agentbox/ledger"
)

// This file only runs the argvs mac.go renders. Cross-compiled and vetted
// on Linux; it has never run on a Mac.

// run runs argv (an absolute path first) and returns its output.
func run(ctx context.Context, argv []string) (string, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String() + errb.String(), fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.String() + errb.String(), nil
}

// LoadFence loads the anchor file and keeps pf's enable token, then checks
// that the anchor holds the account's rules.
func (r *MacRun) LoadFence(ctx context.Context) error {
	out, err := run(ctx, r.PFLoadArgv())
	if err != nil {
		return fmt.Errorf("network fence: %w", err)
	}
	if r.PFToken, err = ParsePFToken(out); err != nil {
		return fmt.Errorf("network fence: %w", err)
	}
	rules, err := run(ctx, r.PFShowArgv())
	if err != nil {
		return fmt.Errorf("network fence: %w", err)
	}
	if !strings.Contains(rules, fmt.Sprintf("user = %d", r.UID)) {
		return fmt.Errorf("network fence: pfctl -sr of %s shows no rule of uid %d after the load", r.Anchor, r.UID)
	}
	return nil
}

// Grant grants the workspace to the account for the run.
func (r *MacRun) Grant(ctx context.Context) error {
	_, err := run(ctx, r.GrantArgv())
	return err
}

// Command is the agent's command as the account, for the caller to give
// streams and start.
func (r *MacRun) Command(ctx context.Context, env, cmd []string) (*exec.Cmd, error) {
	if err := CheckEnv(env); err != nil {
		return nil, err
	}
	argv := r.AgentArgv(env, cmd)
	c := exec.CommandContext(ctx, argv[0], argv[1:]...)
	c.Dir, c.Env = r.Workspace, []string{}
	return c, nil
}

// Teardown kills every process of the account until pgrep finds none (or
// 3 s passed), flushes the anchor and releases pf's token, revokes the
// grant and removes the run's home, and says what survived.
func (r *MacRun) Teardown(ctx context.Context) ledger.Teardown {
	var rec ledger.Teardown
	note := func(err error) {
		if err != nil {
			rec.Errors = append(rec.Errors, err.Error())
		}
	}
	pids, err := r.killAll(ctx)
	note(err)
	rec.SurvivingPIDs = pids
	if _, err := run(ctx, r.PFFlushArgv()); err != nil {
		note(err)
		rec.RuntimeStateLeft = append(rec.RuntimeStateLeft, "pf anchor "+r.Anchor)
	}
	if r.PFToken != "" {
		_, err := run(ctx, r.PFReleaseArgv())
		note(err)
	}
	if r.Workspace != "" {
		_, err := run(ctx, r.RevokeArgv())
		note(err)
	}
	note(removeHome(r.Home))
	rec.Decision = ledger.DecisionClean
	if len(rec.Errors)+len(rec.SurvivingPIDs)+len(rec.RuntimeStateLeft) > 0 {
		rec.Decision = ledger.DecisionResidue
	}
	return rec
}

// killAll kills the account's processes until none is left.
func (r *MacRun) killAll(ctx context.Context) ([]int, error) {
	deadline := time.Now().Add(3 * time.Second)
	for {
		_, _ = run(ctx, r.KillArgv()) // exits 1 when nothing matched
		left, err := r.alive(ctx)
		if err != nil || len(left) == 0 || time.Now().After(deadline) || ctx.Err() != nil {
			slices.Sort(left)
			return left, err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// alive lists the account's processes: pgrep's exit 1 is "none".
func (r *MacRun) alive(ctx context.Context) ([]int, error) {
	argv := r.AliveArgv()
	out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).Output()
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 1 {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", strings.Join(argv, " "), err)
	}
	return ParsePids(string(out))
}

// Recorded is the engine of a run whose bundle has a record, for gc: on
// darwin the Linux engine's record is never written, so none is found.
func Recorded(string) (engine.Engine, bool) { return nil, false }
