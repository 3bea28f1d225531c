package account

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
)

// LookupDarwin reads the account name from Directory Services. An account
// dscl does not know is ErrNoAccount.
func LookupDarwin(ctx context.Context, name string) (Account, error) {
	out, err := output(ctx, DarwinReadArgv(name))
	if err != nil {
		return Account{}, fmt.Errorf("account %q: %w (create it with 'sudo agentbox setup-user'): %w", name, ErrNoAccount, err)
	}
	gids, err := output(ctx, DarwinGroupsArgv(name))
	if err != nil {
		return Account{}, err
	}
	a, err := ParseDSCLRead(name, out, gids)
	if err != nil {
		return Account{}, err
	}
	names, err := output(ctx, DarwinGroupNamesArgv(name))
	if err != nil {
		return Account{}, err
	}
	return NameGroups(a, gids, names)
}

func output(ctx context.Context, argv []string) (string, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		return "", errors.Join(fmt.Errorf("%s: %w", strings.Join(argv, " "), err), errors.New(strings.TrimSpace(errb.String())))
	}
	return string(out), nil
}
