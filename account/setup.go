package account

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

// The dedicated accounts agentbox creates, one per OS.
const (
	LinuxName  = "agentbox-agent"
	LinuxHome  = "/var/lib/agentbox-agent"
	LinuxShell = "/usr/sbin/nologin"
)

// Command is one step of a setup plan: the argv run (never a shell string)
// and why.
type Command struct {
	Argv []string `json:"argv"`
	Why  string   `json:"why"`
}

// String renders the command as a shell would read it, quoted where needed.
func (c Command) String() string {
	q := make([]string, len(c.Argv))
	for i, a := range c.Argv {
		q[i] = shellQuote(a)
	}
	return strings.Join(q, " ")
}

func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@%+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Plan is an ordered list of commands; Notes say what was found and what
// the plan deliberately leaves alone.
type Plan struct {
	OS       string    `json:"os"`
	Commands []Command `json:"commands"`
	Notes    []string  `json:"notes,omitempty"`
}

// Write prints the plan for a person: notes as # comments, then one
// command a line.
func (p Plan) Write(w io.Writer) error {
	for _, n := range p.Notes {
		if _, err := fmt.Fprintf(w, "# %s\n", n); err != nil {
			return err
		}
	}
	for _, c := range p.Commands {
		if _, err := fmt.Fprintf(w, "%s\n", c); err != nil {
			return err
		}
	}
	return nil
}

// LinuxState is what exists of the Linux account before setup.
type LinuxState struct {
	UserExists, GroupExists, HomeExists bool
}

// LinuxSetup is the plan that creates the Linux account: a system user
// with its own group, no password (useradd --system leaves it locked), no
// login shell, an empty home only it can read, in no other group. Steps
// already done are left out, so the plan is empty on a second run.
func LinuxSetup(st LinuxState) Plan {
	p := Plan{OS: "linux"}
	if !st.UserExists {
		args := []string{
			"useradd", "--system", "--home-dir", LinuxHome, "--no-create-home",
			"--shell", LinuxShell, "--comment", "agentbox sandbox account",
		}
		if st.GroupExists {
			args = append(args, "--gid", LinuxName)
		} else {
			args = append(args, "--user-group")
		}
		p.Commands = append(p.Commands, Command{append(args, LinuxName), "a system account with its own group, no password, no login shell"})
	}
	if !st.HomeExists || !st.UserExists {
		p.Commands = append(p.Commands, Command{
			[]string{"install", "-d", "-m", "0700", "-o", LinuxName, "-g", LinuxName, LinuxHome},
			"an empty home that only the account reads (no /etc/skel copy)",
		})
	}
	p.Notes = append(p.Notes, "no sudoers entry: 'agentbox run --isolation user' runs as root on Linux and needs none")
	if len(p.Commands) == 0 {
		p.Notes = append(p.Notes, LinuxName+" and "+LinuxHome+" exist: nothing to do")
	}
	return p
}

// LinuxRemove is the plan that undoes LinuxSetup: the user, its group and
// its home.
func LinuxRemove(st LinuxState) Plan {
	p := Plan{OS: "linux"}
	if st.UserExists {
		p.Commands = append(p.Commands, Command{[]string{"userdel", LinuxName}, "remove the account (and its own group)"})
	} else if st.GroupExists {
		p.Commands = append(p.Commands, Command{[]string{"groupdel", LinuxName}, "remove the account's group"})
	}
	if st.HomeExists {
		p.Commands = append(p.Commands, Command{[]string{"rm", "-rf", "--one-file-system", LinuxHome}, "remove the account's home"})
	}
	if len(p.Commands) == 0 {
		p.Notes = append(p.Notes, LinuxName+" does not exist: nothing to remove")
	}
	return p
}

// ReadLinuxState reads what exists of the Linux account from the passwd
// and group files and the home's path.
func ReadLinuxState(paths Paths) (LinuxState, error) {
	paths = paths.orDefault()
	var st LinuxState
	a, err := Lookup(LinuxName, paths)
	switch {
	case err == nil:
		st.UserExists = true
		if a.Home != LinuxHome || a.Shell != LinuxShell || len(a.Groups) != 1 {
			return st, fmt.Errorf("account %s exists but is not agentbox's (home %s, shell %s, %d groups; want %s, %s, its own group only): remove it with userdel or choose it deliberately", LinuxName, a.Home, a.Shell, len(a.Groups), LinuxHome, LinuxShell)
		}
	case !isNoAccount(err):
		return st, err
	}
	gs, err := groupByName(paths.Group, LinuxName)
	if err != nil {
		return st, err
	}
	st.GroupExists = gs
	if _, err := os.Lstat(LinuxHome); err == nil {
		st.HomeExists = true
	}
	return st, nil
}

// Apply runs the plan's commands in order, echoing each to w, and stops at
// the first that fails.
func Apply(ctx context.Context, p Plan, w io.Writer) error {
	for _, c := range p.Commands {
		fmt.Fprintf(w, "+ %s\n", c)
		cmd := exec.CommandContext(ctx, c.Argv[0], c.Argv[1:]...) //nolint:gosec // the plan's fixed argv
		cmd.Stdout, cmd.Stderr = w, w
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("%s: %w", c, err)
		}
	}
	return nil
}
