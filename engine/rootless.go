package engine

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// UserNS is the user namespace in which a rootless launcher runs its OCI
// runtime, as Podman does: the invoking user is root there and its
// subordinate range follows, so the runtime can give the sandbox a user
// namespace in which container root maps into the subordinate range while
// the agent keeps the user's own uid. Each runtime invocation gets a fresh
// namespace with these same maps, installed by newuidmap and newgidmap.
type UserNS struct {
	// Helper is agentbox-init (or agentbox); its userns-exec command waits
	// for the maps and then executes the runtime (internal/nsexec).
	Helper string
	// UID and GID are the invoking user's ids (root in the namespace).
	UID, GID uint32
	// SubUID and SubGID are the user's subordinate ranges (ids 1… there).
	SubUID, SubGID IDRange
}

// IDRange is a run of host ids.
type IDRange struct{ Start, Count uint32 }

// Translate rewrites host-view id maps (agent → the user's id, the rest →
// subordinate ids) into the namespace's view, which is how the runtime
// inside reads a spec.
func (n UserNS) Translate(uids, gids []specs.LinuxIDMapping) ([]specs.LinuxIDMapping, []specs.LinuxIDMapping, error) {
	u, err := translate(uids, n.UID, n.SubUID)
	if err != nil {
		return nil, nil, fmt.Errorf("uid map: %w", err)
	}
	g, err := translate(gids, n.GID, n.SubGID)
	if err != nil {
		return nil, nil, fmt.Errorf("gid map: %w", err)
	}
	return u, g, nil
}

func translate(maps []specs.LinuxIDMapping, own uint32, sub IDRange) ([]specs.LinuxIDMapping, error) {
	out := make([]specs.LinuxIDMapping, 0, len(maps))
	for _, m := range maps {
		switch {
		case m.HostID == own && m.Size == 1:
			out = append(out, specs.LinuxIDMapping{ContainerID: m.ContainerID, HostID: 0, Size: 1})
		case m.HostID >= sub.Start && uint64(m.HostID)+uint64(m.Size) <= uint64(sub.Start)+uint64(sub.Count):
			out = append(out, specs.LinuxIDMapping{ContainerID: m.ContainerID, HostID: 1 + m.HostID - sub.Start, Size: m.Size})
		default:
			return nil, fmt.Errorf("host ids %d+%d are neither the user's own nor in its subordinate range", m.HostID, m.Size)
		}
	}
	return out, nil
}

// start starts cmd (made by command) and maps its namespace.
func (n UserNS) start(cmd *exec.Cmd) error {
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer w.Close()
	cmd.ExtraFiles = append(cmd.ExtraFiles, r)
	err = cmd.Start()
	r.Close()
	if err != nil {
		return err
	}
	if err := n.mapIDs(cmd.Process.Pid); err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return err
	}
	return nil // closing w tells the helper to go on
}

func (n UserNS) mapIDs(pid int) error {
	p := strconv.Itoa(pid)
	u := []string{p, "0", strconv.Itoa(int(n.UID)), "1", "1", strconv.Itoa(int(n.SubUID.Start)), strconv.Itoa(int(n.SubUID.Count))}
	g := []string{p, "0", strconv.Itoa(int(n.GID)), "1", "1", strconv.Itoa(int(n.SubGID.Start)), strconv.Itoa(int(n.SubGID.Count))}
	for tool, args := range map[string][]string{"newuidmap": u, "newgidmap": g} {
		if out, err := exec.Command(tool, args...).CombinedOutput(); err != nil {
			return fmt.Errorf("%s: %w: %s", tool, err, out)
		}
	}
	return nil
}

// Spec returns a copy of s whose id maps are in the namespace's view, for
// the bundle; s itself (the host view) is what the audit and ledger see.
func (n UserNS) Spec(s *specs.Spec) (*specs.Spec, error) {
	if s.Linux == nil {
		return s, nil
	}
	cp, linux := *s, *s.Linux
	u, g, err := n.Translate(linux.UIDMappings, linux.GIDMappings)
	if err != nil {
		return nil, err
	}
	linux.UIDMappings, linux.GIDMappings = u, g
	cp.Linux = &linux
	return &cp, nil
}
