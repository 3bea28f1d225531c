package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// ErrNotFound is returned when the runtime knows no container of that id.
var ErrNotFound = errors.New("container not found")

// Runtime is an OCI runtime driven through its command line (runc, crun and
// runsc share it), with its own state directory.
type Runtime struct {
	// Name is runc, crun, runsc or the base name of a custom runtime.
	Name string
	// Path is the runtime binary.
	Path string
	// Root is the runtime's state directory (--root); agentbox keeps its
	// own so that its containers never mix with other engines'.
	Root string
	// UserNS, for a rootless launcher with subordinate ids, is the user
	// namespace every invocation of the runtime runs in; nil otherwise.
	UserNS *UserNS `json:",omitempty"`
	// Hide is a mount the runtime must not see (see HiddenUnified); the
	// runtime's create runs in a mount namespace without it, which also
	// holds a bundle's nested binds (see ComposeFile, runInMountNS).
	// Helper is agentbox-init, the helper binary of the engines that run
	// the runtime through one (a containerd shim's runc: package
	// engine/containerd); empty for none.
	Hide   string `json:",omitempty"`
	Helper string `json:",omitempty"`
	// RootTmpfs, set by OpenRuntime (the runtime CLI's engine, whose
	// runtime runs in this process's mount namespace or one made from it),
	// has WriteBundle write a synthesized root into a tmpfs mounted on the
	// bundle's root directory, as root: ~35 mount points, symlinks and
	// small files whose writing and removal on a disk-backed /run cost
	// more than the runtime's create. Teardown unmounts it.
	RootTmpfs bool `json:"-"`
	// Version is what `Path --version` reports, when the caller read it
	// already (the launcher keeps it by the binary's identity,
	// launcher/runtimecache.go); "" has GrantMethod run the binary for it.
	Version string `json:"-"`
}

// ProcRoot is /proc: the runtime's sandboxes are this host's processes.
func (r Runtime) ProcRoot() string { return "/proc" }

// Stdio are the streams given to the sandbox's first process when it has
// no terminal. They are files so that the sandbox inherits them directly:
// a pipe copied by this process would keep the runtime's create command
// waiting for the sandbox to close it.
type Stdio struct {
	In       *os.File
	Out, Err *os.File
}

// CreateOptions configure Create.
type CreateOptions struct {
	// ConsoleSocket is a unix socket path on which the runtime sends the
	// pty master when the spec asks for a terminal; empty otherwise.
	ConsoleSocket string
	// Stdio are the streams of a sandbox without a terminal.
	Stdio Stdio
	// ExtraFiles are passed to the sandbox's first process as fds 3, 4, …
	ExtraFiles []*os.File
}

// State is what the runtime reports of a container.
type State struct {
	ID     string `json:"id"`
	Pid    int    `json:"pid"`
	Status string `json:"status"`
	Bundle string `json:"bundle"`
}

// command prepares one invocation that sets up no cgroup (state, kill,
// delete); extra is the number of extra files the caller will pass.
// Such a call needs no mount hidden: crun 1.8 reads, signals and removes
// (v1 cgroups included) a container it created with the v2 hierarchy
// hidden, on the host's own hybrid layout. The hybrid-cgroup workaround is
// thus one mount namespace per launch, the create's (RUNTIME run --detach),
// made by this process (runInMountNS), with no helper process.
func (r Runtime) command(ctx context.Context, extra int, args ...string) invocation {
	return r.composing(ctx, extra, "", "", args...)
}

// composing prepares one invocation that execute runs in a mount
// namespace of its own where the mount hide is hidden ("" for none) and
// the nested binds of the composition file compose are laid out ("" for
// none); for a rootless launcher, its helper lays them out in the user
// namespace's.
func (r Runtime) composing(ctx context.Context, extra int, hide, compose string, args ...string) invocation {
	full := append([]string{"--root", r.Root}, args...)
	inv := invocation{hide: hide, compose: compose}
	if r.UserNS != nil {
		inv.cmd = r.UserNS.command(ctx, r.Path, full, extra, compose)
	} else {
		inv.cmd = exec.CommandContext(ctx, r.Path, full...)
	}
	inv.cmd.Env = runtimeEnv()
	return inv
}

// invocation is one runtime command and the mount namespace it needs.
type invocation struct {
	cmd           *exec.Cmd
	hide, compose string
}

// execute runs inv to completion: inside the user namespace if any (whose
// helper does the composition), else in a mount namespace made for it
// when it hides a mount or lays out nested binds (runInMountNS), else
// directly.
func (r Runtime) execute(inv invocation) error {
	switch {
	case r.UserNS != nil:
		if err := r.UserNS.start(inv.cmd); err != nil {
			return err
		}
		return inv.cmd.Wait()
	case inv.hide != "" || inv.compose != "":
		return runInMountNS(inv.cmd, inv.hide, inv.compose)
	}
	return inv.cmd.Run()
}

// runtimeEnv is the environment of runtime invocations: enough to work, and
// nothing of the caller's secrets (a runtime passes none to the sandbox, but
// it has no business holding them either).
func runtimeEnv() []string {
	env := []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
	if v, ok := os.LookupEnv("XDG_RUNTIME_DIR"); ok {
		env = append(env, "XDG_RUNTIME_DIR="+v)
	}
	return env
}

// Create sets the sandbox up without starting the command and returns the
// pid of its first process. The caller should be a child subreaper
// (BecomeSubreaper) to collect that process's exit status later.
func (r Runtime) Create(ctx context.Context, id, bundle string, o CreateOptions) (int, error) {
	return r.launch(ctx, []string{"create"}, id, bundle, o)
}

// Run creates the sandbox and starts its command in one runtime call
// (RUNTIME run --detach), and returns the pid of its first process, as
// Create does: one runtime process instead of two (see Runner).
func (r Runtime) Run(ctx context.Context, id, bundle string, o CreateOptions) (int, error) {
	return r.launch(ctx, []string{"run", "--detach"}, id, bundle, o)
}

// launch is Create or Run, by verb.
func (r Runtime) launch(ctx context.Context, verb []string, id, bundle string, o CreateOptions) (int, error) {
	inv, err := r.launching(ctx, verb, id, bundle, o)
	if err != nil {
		return 0, err
	}
	if err := r.execute(inv); err != nil {
		return 0, r.cmdError(verb[0], err, logErrors(runtimeLog(bundle)))
	}
	return readPid(initPidFile(bundle))
}

// launching prepares the invocation of Create, Run or RunForeground, by
// verb: the runtime's log and the pid file in the bundle, the console
// socket or the streams, and the extra files.
func (r Runtime) launching(ctx context.Context, verb []string, id, bundle string, o CreateOptions) (invocation, error) {
	args := append(append(append([]string{"--log", runtimeLog(bundle), "--log-format", "json"}, r.sandboxFlags()...), verb...), "--bundle", bundle, "--pid-file", initPidFile(bundle))
	if o.ConsoleSocket != "" {
		args = append(args, "--console-socket", o.ConsoleSocket)
	}
	if n := len(o.ExtraFiles); n > 0 {
		fds, err := r.passFiles(verb[0], n)
		if err != nil {
			return invocation{}, err
		}
		args = append(args, fds...)
	}
	inv := r.composing(ctx, len(o.ExtraFiles), r.Hide, composition(bundle), append(args, id)...)
	setStdio(inv.cmd, o.Stdio)
	inv.cmd.ExtraFiles = o.ExtraFiles
	return inv, nil
}

// initPidFile is where the runtime writes the pid of the sandbox's first
// process, and runtimeLog its JSON log, in the bundle.
func initPidFile(bundle string) string { return filepath.Join(bundle, "init.pid") }
func runtimeLog(bundle string) string  { return filepath.Join(bundle, runtimeLogName) }

// runtimeLogName is the runtime's log in the bundle.
const runtimeLogName = "runtime.log"

// setStdio hands the files to the command; a nil file stays a nil
// interface (the command then gets /dev/null).
func setStdio(cmd *exec.Cmd, s Stdio) {
	if s.In != nil {
		cmd.Stdin = s.In
	}
	if s.Out != nil {
		cmd.Stdout = s.Out
	}
	if s.Err != nil {
		cmd.Stderr = s.Err
	}
}

// logErrors returns the messages of the error lines of a runtime's JSON
// log ({"level":"error","msg":…}), which is where runc and crun report why
// create failed.
func logErrors(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	var msgs []string
	for _, line := range bytes.Split(data, []byte("\n")) {
		var e struct{ Level, Msg string }
		if json.Unmarshal(line, &e) == nil && (e.Level == "error" || e.Level == "fatal") && e.Msg != "" {
			msgs = append(msgs, e.Msg)
		}
	}
	return strings.Join(msgs, "; ")
}

func readPid(path string) (int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("read pid file: %w", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 0 {
		return 0, fmt.Errorf("pid file %s: bad pid %q", path, data)
	}
	return pid, nil
}

// Start runs the command of a created sandbox; like create, it runs with
// Hide hidden.
func (r Runtime) Start(ctx context.Context, id string) error {
	inv := r.composing(ctx, 0, r.Hide, "", "start", id)
	var stderr bytes.Buffer
	inv.cmd.Stderr = &stderr
	if err := r.execute(inv); err != nil {
		return r.cmdError("start", err, stderr.String())
	}
	return nil
}

// Kill sends sig to the sandbox's first process, or to all of its
// processes when all is true.
func (r Runtime) Kill(ctx context.Context, id string, sig syscall.Signal, all bool) error {
	args := []string{"kill"}
	if all {
		args = append(args, "--all")
	}
	return r.run(ctx, append(args, id, strconv.Itoa(int(sig)))...)
}

// Delete removes the sandbox's runtime state; force kills it first.
func (r Runtime) Delete(ctx context.Context, id string, force bool) error {
	args := []string{"delete"}
	if force {
		args = append(args, "--force")
	}
	return r.run(ctx, append(args, id)...)
}

// State reports a container, or ErrNotFound.
func (r Runtime) State(ctx context.Context, id string) (State, error) {
	out, err := r.output(ctx, "state", id)
	if err != nil {
		return State{}, err
	}
	var s State
	if err := json.Unmarshal(out, &s); err != nil {
		return State{}, fmt.Errorf("%s state: %w", r.Name, err)
	}
	return s, nil
}

func (r Runtime) run(ctx context.Context, args ...string) error {
	_, err := r.output(ctx, args...)
	return err
}

func (r Runtime) output(ctx context.Context, args ...string) ([]byte, error) {
	inv := r.command(ctx, 0, args...)
	var stdout, stderr bytes.Buffer
	inv.cmd.Stdout, inv.cmd.Stderr = &stdout, &stderr
	if err := r.execute(inv); err != nil {
		return stdout.Bytes(), r.cmdError(args[0], err, stderr.String())
	}
	return stdout.Bytes(), nil
}

// cmdError turns a failed runtime invocation into an error carrying the
// runtime's own message; "does not exist" becomes ErrNotFound.
func (r Runtime) cmdError(verb string, err error, stderr string) error {
	msg := runtimeMessage(stderr)
	lower := strings.ToLower(msg)
	notFound := strings.Contains(lower, "does not exist") || strings.Contains(lower, "not found") || strings.Contains(lower, "no such file")
	if notFound && (verb == "state" || verb == "delete" || verb == "kill") {
		return fmt.Errorf("%s %s: %s: %w", r.Name, verb, msg, ErrNotFound)
	}
	if msg == "" {
		return fmt.Errorf("%s %s: %w", r.Name, verb, err)
	}
	return fmt.Errorf("%s %s: %s", r.Name, verb, msg)
}

// runtimeMessage extracts the message of runc's logfmt error lines
// (time=… level=error msg="…"), or returns the text trimmed.
func runtimeMessage(stderr string) string {
	var msgs []string
	for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if i := strings.Index(line, `msg="`); i >= 0 {
			if s, err := strconv.Unquote(line[i+4:]); err == nil {
				msgs = append(msgs, s)
				continue
			}
		}
		if l := strings.TrimSpace(line); l != "" {
			msgs = append(msgs, l)
		}
	}
	return strings.Join(msgs, "; ")
}
