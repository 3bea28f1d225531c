package launcher

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
)

// HelperName is the program installed beside agentbox that holds what the
// launch binary does not link for audit, compose and kube: the audit of
// compose files, manifests and containers, compose-go and k8s.io (README,
// "Three binaries"). agentbox executes it for those commands, whole.
const HelperName = "agentbox-ext"

// ContainerdHelperName is the program installed beside agentbox that links
// the containerd engine (its client, grpc, protobuf) and nothing of
// agentbox-ext's: agentbox executes it, whole, for a run, self-test, spec,
// doctor or gc on containerd (ErrEngineElsewhere), so that such a launch
// pays neither compose-go's nor k8s.io's initialisers. It is cmd/agentbox
// built with the agentbox_containerd tag.
const ContainerdHelperName = "agentbox-containerd"

// helperHolds says what each helper holds, for the error that it is missing.
var helperHolds = map[string]string{HelperName: "this command (audit, compose, kube)", ContainerdHelperName: "the containerd engine (--engine containerd)"}

// helperTags are the build tags that make cmd/agentbox each helper.
var helperTags = map[string]string{HelperName: "agentbox_ext", ContainerdHelperName: "agentbox_containerd"}

// HelperCommands are agentbox-ext's own commands, with their help lines:
// the launch binary links nothing they need (compose-go, k8s.io), so that
// no initialiser of theirs runs on `agentbox run`; it lists them and
// executes agentbox-ext for them (ExecHelper), as it executes
// agentbox-containerd for a run, self-test or gc on an engine it does not
// link (ErrEngineElsewhere). agentbox-ext is cmd/agentbox built with the
// agentbox_ext tag.
var HelperCommands = map[string]string{
	"audit":   "name the faults in a container, OCI config, inspect JSON or compose file",
	"compose": "write a hardened compose project (agent + gateway + internal network), or --check one",
	"kube":    "write Kubernetes manifests: a restricted namespace, the agent pod, the gateway, network policies",
}

// HelperFor is the helper that runs the command cmd when this binary
// does not: agentbox-ext for HelperCommands, agentbox-containerd for any
// other (a command that needs the containerd engine: ErrEngineElsewhere,
// the only other reason a command is handed over).
func HelperFor(cmd string) string {
	if _, ok := HelperCommands[cmd]; ok {
		return HelperName
	}
	return ContainerdHelperName
}

// FindHelper is the helper called name (HelperName, ContainerdHelperName)
// beside the running executable (links resolved), and only there: never
// on PATH, never in the workspace. It is checked as a runtime is: the file
// and every directory above it must be owned by root, by the invoking user
// or by the owner of the running executable (who already chose what runs),
// and writable by no one else; a sticky directory owned by one of them
// (/tmp) is accepted, as no other user can replace an entry in it.
func FindHelper(name string) (string, error) {
	tag, ok := helperTags[name]
	if !ok {
		return "", &Error{Kind: KindHost, Err: fmt.Errorf("%q is not one of agentbox's helpers", name)}
	}
	self, err := os.Executable()
	if err == nil {
		self, err = filepath.EvalSymlinks(self)
	}
	if err != nil {
		return "", &Error{Kind: KindHost, Err: fmt.Errorf("find %s: the running executable: %w", name, err)}
	}
	if filepath.Base(self) == name { // a binary installed under the helper's name without its tag: never execute itself
		return "", &Error{Kind: KindHost, Err: fmt.Errorf("%s was built without the %s tag, so it lacks this command; rebuild the programs with make build", self, tag)}
	}
	fi, err := os.Stat(self)
	if err != nil {
		return "", &Error{Kind: KindHost, Err: fmt.Errorf("find %s: %w", name, err)}
	}
	helper := filepath.Join(filepath.Dir(self), name)
	if err := checkHelper(helper, []uint32{0, uint32(os.Geteuid()), ownerOf(fi)}); err != nil {
		return "", &Error{Kind: KindHost, Err: err}
	}
	return helper, nil
}

func ownerOf(fi fs.FileInfo) uint32 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Uid
	}
	return 0
}

// checkHelper refuses a helper that is missing, not an executable file,
// or that someone outside owners could have written.
func checkHelper(helper string, owners []uint32) error {
	name := filepath.Base(helper)
	fi, err := os.Lstat(helper)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s is not installed beside agentbox (%s); %s lives there: install agentbox's programs into one directory (make build puts bin/%s beside bin/agentbox; README, Install)", name, helper, helperHolds[name], name)
	case err != nil:
		return fmt.Errorf("%s: %w", helper, err)
	case !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0:
		return fmt.Errorf("%s is not an executable file (mode %s); reinstall it beside agentbox (make build)", helper, fi.Mode())
	}
	for p := helper; ; p = filepath.Dir(p) {
		fi, err := os.Lstat(p)
		if err != nil {
			return fmt.Errorf("check %s: %w", p, err)
		}
		uid := ownerOf(fi)
		if !containsUID(owners, uid) {
			return fmt.Errorf("%s is owned by uid %d, neither root, you nor agentbox's owner, so it could run their code as you; reinstall %s (make build, or install the programs as root)", p, uid, name)
		}
		sticky := fi.IsDir() && fi.Mode()&fs.ModeSticky != 0
		if fi.Mode().Perm()&0o022 != 0 && !sticky {
			return fmt.Errorf("%s is writable by group or others (mode %04o), so another user could replace %s; install it in a directory only root or you can write", p, fi.Mode().Perm(), helper)
		}
		if p == "/" {
			return nil
		}
	}
}

func containsUID(list []uint32, u uint32) bool {
	for _, x := range list {
		if x == u {
			return true
		}
	}
	return false
}

// ExecHelper runs the helper of args[0] (HelperFor: agentbox-ext or
// agentbox-containerd) with args (the command and its arguments, as the
// user typed them) and returns the exit code. When the streams are
// the process's own, the helper replaces this process (execve): its exit
// code, signals and terminal are the user's, untouched, and ExecHelper
// returns only on failure, which it prints to stderr as a subcommand
// does. Otherwise (a test's buffers) the helper runs as a child on them.
func ExecHelper(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	code, err := execHelper(args, stdin, stdout, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "agentbox %s: %v\n", args[0], err)
		return ExitCode(err)
	}
	return code
}

func execHelper(args []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	name := HelperFor(args[0])
	helper, err := FindHelper(name)
	if err != nil {
		return 0, err
	}
	if stdin == io.Reader(os.Stdin) && stdout == io.Writer(os.Stdout) && stderr == io.Writer(os.Stderr) {
		err := syscall.Exec(helper, append([]string{name}, args...), os.Environ()) // #nosec G204 -- the checked sibling
		return 0, &Error{Kind: KindHost, Err: fmt.Errorf("execute %s: %w", helper, err)}
	}
	cmd := exec.Command(helper, args...)
	cmd.Args[0] = name
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	err = cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal()), nil
		}
		return exit.ExitCode(), nil
	}
	if err != nil {
		return 0, &Error{Kind: KindHost, Err: fmt.Errorf("run %s: %w", helper, err)}
	}
	return ExitOK, nil
}
