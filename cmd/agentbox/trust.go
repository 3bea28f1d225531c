package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/agentbox/agentbox/launcher"
	"github.com/agentbox/agentbox/policy"
)

func init() {
	register(command{name: "trust", summary: "trust a workspace's agentbox.yaml in its current content (like direnv allow)", run: runTrust})
}

// trustFlags are agentbox trust's flags.
type trustFlags struct {
	workspace string
	digest    string
	revoke    bool
	list      bool
	check     bool
	json      bool
}

// runTrust trusts, checks, revokes or lists workspace policy files. A
// workspace's agentbox.yaml is the agent's side: `run` uses it only in
// the exact content trusted here, and the trust store is kept in the user's
// configuration directory, where no sandbox can write.
func runTrust(_ context.Context, s stdio, args []string) int {
	var f trustFlags
	fs := newFlags(s, "trust", "[flags] [FILE|DIR]")
	fs.StringVarP(&f.workspace, "workspace", "w", "", "workspace whose agentbox.yaml to trust (default: current directory)")
	fs.StringVar(&f.digest, "digest", "", "trust only if the file still has this digest (the one a refusal printed)")
	fs.BoolVar(&f.check, "check", false, "only say whether the file is trusted (exit 0) or not (exit 1), with the diff")
	fs.BoolVar(&f.revoke, "revoke", false, "forget the file: runs refuse it again until it is trusted")
	fs.BoolVar(&f.list, "list", false, "list the trusted files")
	fs.BoolVar(&f.json, "json", false, "print the result as JSON")
	pos, cmd, code, ok := parseFlags(fs, args)
	if !ok {
		return code
	}
	if len(pos) > 1 || len(cmd) > 0 || f.revoke && f.list || f.revoke && f.check || f.list && f.check {
		return fail(s, "trust", usagef("give at most one FILE or DIR and at most one of --check, --revoke, --list; see 'agentbox trust --help'"))
	}
	cfg, err := policy.ConfigDir(s.Getenv)
	if err != nil {
		return fail(s, "trust", launcher.WithKind(launcher.KindUsage, err))
	}
	store := policy.Sources{ConfigDir: cfg}.Store()
	if f.list {
		return trustList(s, store, f.json)
	}
	cwd, err := os.Getwd()
	if err != nil {
		return fail(s, "trust", err)
	}
	target := f.workspace
	if len(pos) == 1 {
		target = pos[0]
	}
	path, err := policy.TrustTarget(cwd, target)
	if err != nil {
		return fail(s, "trust", err)
	}
	switch {
	case f.revoke:
		return trustRevoke(s, store, path, f.json)
	case f.check:
		st, _, err := store.Status(path)
		if err != nil {
			return fail(s, "trust", err)
		}
		st.Action = "checked"
		return trustReport(s, st, f.json, exitFindings)
	}
	st, err := store.TrustFile(path, f.digest, time.Now())
	if err != nil {
		return fail(s, "trust", err)
	}
	return trustReport(s, st, f.json, exitOK)
}

// trustReport prints st; untrustedCode is the exit code when st is not
// trusted.
func trustReport(s stdio, st policy.TrustStatus, asJSON bool, untrustedCode int) int {
	code := exitOK
	if !st.Trusted {
		code = untrustedCode
	}
	if asJSON {
		if c := writeJSON(s, "trust", st); c != exitOK {
			return c
		}
		return code
	}
	fmt.Fprintln(s.Out, st.Text())
	return code
}

func trustRevoke(s stdio, store policy.TrustStore, path string, asJSON bool) int {
	st, had, err := store.RevokeFile(path)
	if err != nil {
		return fail(s, "trust", hostErr(err))
	}
	if !had {
		fmt.Fprintf(s.Err, "agentbox trust: %s was not trusted; nothing to revoke\n", path)
		return exitFindings
	}
	return trustReport(s, st, asJSON, exitOK)
}

func trustList(s stdio, store policy.TrustStore, asJSON bool) int {
	list, err := store.Listed()
	switch {
	case err != nil:
		return fail(s, "trust", hostErr(err))
	case asJSON:
		return writeJSON(s, "trust", list)
	case len(list) == 0:
		fmt.Fprintf(s.Err, "agentbox trust: no trusted files in %s\n", store.Dir)
	}
	for _, st := range list {
		fmt.Fprintln(s.Out, st.Text())
	}
	return exitOK
}
