package doctor

import (
	"context"
	"fmt"
	"io/fs"
	"strings"

	"github.com/agentbox/agentbox/engine/advisory"
	"github.com/agentbox/agentbox/engine/containerd/ctrversion"
)

// containerdSocket is containerd's default socket, the one agentbox run
// --engine containerd uses when neither --address nor the policy's
// address: names another.
const containerdSocket = ctrversion.DefaultAddress

// ContainerdPolicy is what the policy doctor's self-test plans with (the
// user's own policy file; launcher.DoctorOptions) says of containerd:
// whether it runs sandboxes there (engine: containerd), and the daemon's
// socket (address:, "" for containerd's default).
type ContainerdPolicy struct {
	Engine  bool
	Address string
	// Helper is the program that runs a launch on containerd
	// (agentbox-containerd beside agentbox, or the running binary when it
	// links the engine), HelperErr why there is none (launcher.FindHelper's
	// refusal); both "" leave it unexamined.
	Helper, HelperErr string
}

// ContainerdFacts describe the containerd daemon agentbox's containerd
// engine would use; nil in Facts when neither containerd nor its socket is
// on this host and the policy does not name the engine.
type ContainerdFacts struct {
	Address string `json:"address"`
	// FromPolicy: Address is the policy's address:, not the default.
	FromPolicy bool `json:"from_policy,omitempty"`
	// Chosen: the policy names engine: containerd, so agentbox run uses
	// this daemon.
	Chosen      bool `json:"chosen,omitempty"`
	SocketFound bool `json:"socket_found"`
	// Version is the daemon's (ctr version), VersionErr why it is unknown.
	Version    string `json:"version,omitempty"`
	VersionErr string `json:"version_err,omitempty"`
	// Shim is containerd-shim-runc-v2 on PATH, "" when missing.
	Shim string `json:"shim,omitempty"`
	// Helper is the program agentbox runs a launch on containerd in,
	// HelperErr why it has none (ContainerdPolicy).
	Helper    string `json:"helper,omitempty"`
	HelperErr string `json:"helper_err,omitempty"`
}

// gatherContainerd asks the daemon the policy p would use its version
// through ctr; the engine's own version gate
// (engine/containerd/ctrversion.Gate) judges it.
func gatherContainerd(ctx context.Context, h Host, f *Facts, p ContainerdPolicy) {
	c := ContainerdFacts{Address: containerdSocket, Chosen: p.Engine, Helper: p.Helper, HelperErr: p.HelperErr}
	if p.Address != "" {
		c.Address, c.FromPolicy = p.Address, true
	}
	_, daemonErr := h.Sys.LookPath("containerd")
	st, err := h.Sys.Stat(c.Address)
	c.SocketFound = err == nil && st.Mode.Type() == fs.ModeSocket
	if daemonErr != nil && !c.SocketFound && !c.Chosen {
		return
	}
	c.Shim, _ = h.Sys.LookPath("containerd-shim-runc-v2")
	if c.SocketFound {
		c.Version, c.VersionErr = containerdVersion(ctx, h, c.Address)
	}
	f.Containerd = &c
}

func containerdVersion(ctx context.Context, h Host, address string) (version, why string) {
	ctr, err := h.Sys.LookPath("ctr")
	if err != nil {
		return "", "ctr is not on PATH"
	}
	out, err := h.Sys.Output(ctx, ctr, "--address", address, "version")
	if err != nil {
		return "", fmt.Sprintf("ctr --address %s version: %v", address, err)
	}
	return parseCtrServerVersion(string(out)), ""
}

// parseCtrServerVersion reads the server's Version line of `ctr version`.
func parseCtrServerVersion(out string) string {
	server := false
	for _, line := range strings.Split(out, "\n") {
		t := strings.TrimSpace(line)
		if t == "Server:" {
			server = true
		}
		if v, ok := strings.CutPrefix(t, "Version:"); ok && server {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// checkContainerd reports whether `agentbox run --engine containerd` can
// use the daemon: its socket, its version, the runc shim, the program that
// links the engine (agentbox-containerd beside agentbox), and which runc
// agentbox's tasks run (the plan's runtime, which the engine hands the
// shim, and whose CVEs the runtime-cves check covers). A daemon that
// cannot run a sandbox is a WARN, since the engine is one a user chooses,
// and a FAIL when the policy has chosen it: agentbox run would fail.
func checkContainerd(f *Facts) []Result {
	c := f.Containerd
	if c == nil {
		return nil
	}
	r := Result{ID: "containerd", Status: Pass}
	where, cannot, fix := "containerd's default socket "+c.Address, Warn, "start containerd, or give agentbox run --engine containerd --address SOCKET"
	if c.FromPolicy {
		where = c.Address + " (the policy's address:)"
	}
	if c.Chosen {
		where += ", which agentbox run uses (the policy's engine: containerd)"
		cannot, fix = Fail, "start containerd there, or point address: in the policy at its socket, or remove engine: containerd"
	}
	switch {
	case !c.SocketFound:
		r.Detail, r.Fix = "no containerd socket exists at "+where+" (the daemon is not running); --engine containerd needs it", fix
		if c.Chosen {
			r.Status = cannot
		}
		return []Result{r}
	case c.Version == "":
		return []Result{{ID: r.ID, Status: Unknown, Detail: "containerd's socket at " + where + " is there, but its version could not be read: " + c.VersionErr, Fix: "apt-get install containerd (it ships ctr), then run doctor as root"}}
	}
	r.Detail = fmt.Sprintf("containerd %s answers on %s", c.Version, where)
	if err := ctrversion.Gate(c.Version); err != nil {
		r.Status, r.Detail, r.Fix = cannot, r.Detail+": "+err.Error(), installCommand(f.OS, "containerd")
		return []Result{r}
	}
	if c.Shim == "" {
		r.Status, r.Detail, r.Fix = cannot, r.Detail+", but containerd-shim-runc-v2 is not on PATH: --engine containerd cannot start a task", installCommand(f.OS, "containerd")
		return []Result{r}
	}
	if c.HelperErr != "" {
		r.Status, r.Detail, r.Fix = cannot, r.Detail+", but agentbox cannot run a launch on it: "+c.HelperErr, "make build, then install bin/agentbox-containerd beside agentbox (README, Install)"
		return []Result{r}
	}
	if note := ctrversion.Untested(c.Version); note != "" {
		r.Detail += " (" + note + ")"
	}
	if c.Helper != "" {
		r.Detail += "; launches on it run in " + c.Helper
	}
	r.Detail += fmt.Sprintf("; its runc shim is %s, and agentbox's tasks run the plan's runtime under it (%s): %s", c.Shim, planRuntime(f), shimRuntimeFixes(f))
	if strings.Contains(r.Detail, "EXPOSED") {
		r.Status, r.Fix = Warn, "update the runtime (runtime-cves has each fix), or accept the finding for --engine containerd runs in the policy with a reason"
	}
	return []Result{r}
}

// shimRuntimeFixes says whether the runtime containerd's shim will run
// for agentbox is the patched one: the advisory table's verdicts for it in
// the default mode, as runtime-cves gives them one by one.
func shimRuntimeFixes(f *Facts) string {
	judged, err := judgeRuntimes(f)
	if err != nil {
		return "its fixes are unknown (" + err.Error() + ")"
	}
	var lacking, exposed []string
	for i, rt := range f.Runtimes {
		if rt.Name != f.defaultRuntime() {
			continue
		}
		for _, fd := range judged[i][0] {
			switch {
			case fd.Verdict == advisory.Fixed || fd.Verdict == advisory.NotAffected:
			case fd.Residual():
				lacking = append(lacking, fd.Key)
			default:
				exposed = append(exposed, fd.Key)
			}
		}
	}
	switch {
	case len(exposed) > 0:
		return fmt.Sprintf("it is not patched: EXPOSED to %s in the default mode, so agentbox run refuses unless the policy accepts it", strings.Join(exposed, ", "))
	case len(lacking) > 0:
		return fmt.Sprintf("it lacks %d fixes that the default mode does not expose (%s)", len(lacking), strings.Join(lacking, ", "))
	}
	return "it has every fix of the advisory table"
}

// planRuntime describes the default runtime as doctor found it.
func planRuntime(f *Facts) string {
	for _, rt := range f.Runtimes {
		if rt.Name == f.defaultRuntime() {
			return describeRuntime(rt)
		}
	}
	return f.defaultRuntime() + ", not installed"
}
