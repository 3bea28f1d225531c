package account

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"

	"github.com/spf13/pflag"
)

// SetupOptions say what `agentbox setup-user` does. The zero value creates
// the account of this OS.
type SetupOptions struct {
	// Remove undoes the setup instead.
	Remove bool
	// DryRun prints the plan and runs nothing; it needs no root.
	DryRun bool
	// OS is "linux" or "darwin"; empty is this machine's. Another OS's
	// plan can only be printed (DryRun).
	OS string
	// Paths are the passwd and group files the Linux state is read from.
	Paths Paths
}

// ErrNotRoot is returned by SetupUser when it would change the system
// without root.
var ErrNotRoot = errors.New("setup-user changes the system's accounts and needs root: run it with sudo, or add --dry-run to see the commands")

// SetupUser plans the creation (or removal) of the dedicated account,
// prints the plan to w and, unless DryRun, runs it. A second run finds the
// work done and runs nothing.
func SetupUser(ctx context.Context, o SetupOptions, w io.Writer) error {
	goos := o.OS
	if goos == "" {
		goos = runtime.GOOS
	}
	if goos != runtime.GOOS && !o.DryRun {
		return fmt.Errorf("the %s account is made on %s: here, add --dry-run to print its plan", goos, goos)
	}
	if !o.DryRun && os.Geteuid() != 0 {
		return ErrNotRoot
	}
	p, err := setupPlan(ctx, goos, o)
	if err != nil {
		return err
	}
	if o.DryRun {
		return p.Write(w)
	}
	for _, n := range p.Notes {
		fmt.Fprintf(w, "# %s\n", n)
	}
	return Apply(ctx, p, w)
}

func setupPlan(ctx context.Context, goos string, o SetupOptions) (Plan, error) {
	switch goos {
	case "linux":
		st, err := ReadLinuxState(o.Paths)
		if err != nil {
			return Plan{}, err
		}
		if o.Remove {
			return LinuxRemove(st), nil
		}
		return LinuxSetup(st), nil
	case "darwin":
		return darwinPlan(ctx, o.Remove, runtime.GOOS == "darwin")
	}
	return Plan{}, fmt.Errorf("setup-user: OS %q: want linux or darwin", goos)
}

// darwinPlan reads, on a Mac, whether the account exists and which ids
// are taken; elsewhere it can only show the plan for the first id of the
// range.
func darwinPlan(ctx context.Context, remove, onMac bool) (Plan, error) {
	if !onMac {
		p := DarwinSetup(DarwinIDMin)
		if remove {
			p = DarwinRemove()
		}
		p.Notes = append([]string{fmt.Sprintf("not on a Mac: the id shown is %d; on the Mac it is the first free in %d-%d across dscl users and groups", DarwinIDMin, DarwinIDMin, DarwinIDMax)}, p.Notes...)
		return p, nil
	}
	exists := exec.CommandContext(ctx, "/usr/bin/dscl", ".", "-read", "/Users/"+DarwinName, "UniqueID").Run() == nil
	switch {
	case remove && !exists:
		return Plan{OS: "darwin", Notes: []string{DarwinName + " does not exist: nothing to remove"}}, nil
	case remove:
		return DarwinRemove(), nil
	case exists:
		return Plan{OS: "darwin", Notes: []string{DarwinName + " exists: nothing to do"}}, nil
	}
	id, err := freeDarwinID(ctx)
	if err != nil {
		return Plan{}, err
	}
	return DarwinSetup(id), nil
}

func freeDarwinID(ctx context.Context) (int, error) {
	var lists [2][]int
	for i, args := range [][]string{{".", "-list", "/Users", "UniqueID"}, {".", "-list", "/Groups", "PrimaryGroupID"}} {
		out, err := exec.CommandContext(ctx, "/usr/bin/dscl", args...).Output()
		if err != nil {
			return 0, fmt.Errorf("dscl %v: %w", args, err)
		}
		if lists[i], err = ParseDSCLList(string(out)); err != nil {
			return 0, err
		}
	}
	return ChooseDarwinID(lists[0], lists[1])
}

// SetupFlags adds the setup-user flags to fs and returns the options they
// fill.
func SetupFlags(fs *pflag.FlagSet) *SetupOptions {
	o := &SetupOptions{}
	fs.BoolVar(&o.DryRun, "dry-run", false, "print every command and run none (no root needed)")
	fs.BoolVar(&o.Remove, "remove", false, "undo the setup: remove the account, its group and its home")
	fs.StringVar(&o.OS, "os", "", "whose plan: linux or darwin (default: this machine's; another OS's only with --dry-run)")
	return o
}
