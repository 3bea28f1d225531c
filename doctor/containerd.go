package doctor

import (
	"context"
	"fmt"
	"io/fs"
	"strings"

	"github.com/agentbox/agentbox/engine/containerd/ctrversion"
)

// containerdSocket is the daemon's socket doctor checks: CONTAINERD_ADDRESS
// (as ctr reads it) or containerd's default, the one agentbox run
// --engine containerd uses without --address.
const containerdSocket = "/run/containerd/containerd.sock"

// ContainerdFacts describe the containerd daemon agentbox's containerd
// engine would use; nil in Facts when neither containerd nor its socket is
// on this host.
type ContainerdFacts struct {
	Address     string `json:"address"`
	SocketFound bool   `json:"socket_found"`
	// Version is the daemon's (ctr version), VersionErr why it is unknown.
	Version    string `json:"version,omitempty"`
	VersionErr string `json:"version_err,omitempty"`
	// Shim is containerd-shim-runc-v2 on PATH, "" when missing.
	Shim string `json:"shim,omitempty"`
}

// gatherContainerd asks the daemon its version through ctr; the engine's
// own version gate (engine/containerd/ctrversion.Gate) judges it. The containerd
// results never block: the engine is one a user chooses.
func gatherContainerd(ctx context.Context, h Host, f *Facts) {
	c := ContainerdFacts{Address: containerdSocket}
	if a := h.Sys.Getenv("CONTAINERD_ADDRESS"); a != "" {
		c.Address = a
	}
	_, daemonErr := h.Sys.LookPath("containerd")
	st, err := h.Sys.Stat(c.Address)
	c.SocketFound = err == nil && st.Mode.Type() == fs.ModeSocket
	if daemonErr != nil && !c.SocketFound {
		return
	}
	c.Shim, _ = h.Sys.LookPath("containerd-shim-runc-v2")
	c.Version, c.VersionErr = containerdVersion(ctx, h, c.Address)
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
// use the daemon: its socket, its version, the runc shim, and which runc
// agentbox's tasks run (the plan's runtime, which the engine hands the
// shim, and whose CVEs the runtime-cves check covers).
func checkContainerd(f *Facts) []Result {
	c := f.Containerd
	if c == nil {
		return nil
	}
	id := "containerd"
	switch {
	case !c.SocketFound:
		return []Result{{ID: id, Status: Pass, Detail: "containerd is installed but no socket exists at " + c.Address + " (the daemon is not running); --engine containerd needs it", Fix: "start containerd, or give agentbox run --engine containerd --address SOCKET"}}
	case c.Version == "":
		return []Result{{ID: id, Status: Unknown, Detail: "containerd's socket " + c.Address + " is there, but its version could not be read: " + c.VersionErr, Fix: "apt-get install containerd (it ships ctr), then run doctor as root"}}
	}
	r := Result{ID: id, Status: Pass, Detail: fmt.Sprintf("containerd %s answers on %s", c.Version, c.Address)}
	if err := ctrversion.Gate(c.Version); err != nil {
		r.Status, r.Detail, r.Fix = Warn, r.Detail+": "+err.Error(), installCommand(f.OS, "containerd")
		return []Result{r}
	}
	if c.Shim == "" {
		r.Status, r.Detail, r.Fix = Warn, r.Detail+", but containerd-shim-runc-v2 is not on PATH: --engine containerd cannot start a task", installCommand(f.OS, "containerd")
		return []Result{r}
	}
	r.Detail += fmt.Sprintf("; its runc shim is %s, and agentbox's tasks run the plan's runtime (%s), whose CVEs are under runtime-cves", c.Shim, planRuntime(f))
	return []Result{r}
}

// planRuntime describes the default runtime as doctor found it.
func planRuntime(f *Facts) string {
	for _, rt := range f.Runtimes {
		if rt.Name == defaultRuntime {
			return describeRuntime(rt)
		}
	}
	return defaultRuntime + ", not installed"
}
