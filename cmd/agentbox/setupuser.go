package main

import (
	"context"

	"github.com/agentbox/agentbox/account"
)

func init() {
	register(command{name: "setup-user", summary: "create (or --remove) the dedicated account agentbox-agent; no sudoers entry yet", run: runSetupUser})
}

func runSetupUser(ctx context.Context, s stdio, args []string) int {
	fs := newFlags(s, "setup-user", "[--dry-run] [--remove] [--os linux|darwin]")
	o := account.SetupFlags(fs)
	pos, cmd, code, ok := parseFlags(fs, args)
	switch {
	case !ok:
		return code
	case len(pos)+len(cmd) > 0:
		return fail(s, "setup-user", usagef("takes no arguments, got %q", append(pos, cmd...)))
	}
	if err := account.SetupUser(ctx, *o, s.Out); err != nil {
		return fail(s, "setup-user", hostErr(err))
	}
	return exitOK
}
