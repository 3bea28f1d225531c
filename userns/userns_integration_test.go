//go:build integration && linux

package userns

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/agentbox/agentbox/internal/testutil"
	specs "github.com/opencontainers/runtime-spec/specs-go"
)

func procIDMap(ms []specs.LinuxIDMapping) []syscall.SysProcIDMap {
	out := make([]syscall.SysProcIDMap, len(ms))
	for i, m := range ms {
		out[i] = syscall.SysProcIDMap{ContainerID: int(m.ContainerID), HostID: int(m.HostID), Size: int(m.Size)}
	}
	return out
}

func formatMap(ms []specs.LinuxIDMapping) string {
	var b strings.Builder
	for _, m := range ms {
		fmt.Fprintf(&b, "%d %d %d\n", m.ContainerID, m.HostID, m.Size)
	}
	return b.String()
}

// normalise turns the kernel's padded uid_map columns into "a b c" lines.
func normalise(s string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		b.WriteString(strings.Join(strings.Fields(l), " ") + "\n")
	}
	return b.String()
}

// runInUserNS runs script with sh in a new user namespace with mappings m,
// as agentUID/agentGID inside, in a world-writable scratch directory that
// it returns.
func runInUserNS(t *testing.T, m Mappings, agentUID, agentGID uint32, script string) (string, string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "agentbox-userns-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER,
		UidMappings: procIDMap(m.UIDs),
		GidMappings: procIDMap(m.GIDs),
		Credential:  &syscall.Credential{Uid: agentUID, Gid: agentGID, NoSetGroups: true},
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child in user namespace: %v\n%s", err, out)
	}
	return string(out), dir
}

// TestSlotMappingInKernel applies a keep-id mapping built by ForSlot to a
// real user namespace: the kernel accepts it as built, and a file the agent
// writes is owned on the host by the keep ids.
func TestSlotMappingInKernel(t *testing.T) {
	testutil.RequireRoot(t)
	testutil.RequireBinary(t, "sh", "dash")
	h, err := ReadHostIDs("/etc")
	if err != nil {
		t.Fatal(err)
	}
	a := &Allocator{Dir: t.TempDir(), Host: h}
	lease, err := a.Allocate("integration-test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Release("integration-test") })
	const agent, keepUID, keepGID = 1000, 4242, 4343
	m, err := ForSlot(lease.Slot, agent, agent, &Keep{UID: keepUID, GID: keepGID})
	if err != nil {
		t.Fatal(err)
	}
	out, dir := runInUserNS(t, m, agent, agent, "cat /proc/self/uid_map; echo --; cat /proc/self/gid_map; echo --; id -u; touch f")
	parts := strings.Split(out, "--\n")
	if len(parts) != 3 {
		t.Fatalf("unexpected child output:\n%s", out)
	}
	if got, want := normalise(parts[0]), formatMap(m.UIDs); got != want {
		t.Errorf("uid_map in the kernel:\n%s\nwant:\n%s", got, want)
	}
	if got, want := normalise(parts[1]), formatMap(m.GIDs); got != want {
		t.Errorf("gid_map in the kernel:\n%s\nwant:\n%s", got, want)
	}
	if got := strings.TrimSpace(parts[2]); got != fmt.Sprint(agent) {
		t.Errorf("agent uid inside = %s, want %d", got, agent)
	}
	fi, err := os.Stat(filepath.Join(dir, "f"))
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	if st.Uid != keepUID || st.Gid != keepGID {
		t.Errorf("file written by the agent is owned by %d:%d on the host, want the keep ids %d:%d", st.Uid, st.Gid, keepUID, keepGID)
	}
}

// TestSingleMappingInKernelRootless maps the invoking unprivileged user alone, as
// rootless mode does without newuidmap, and checks the result in a real
// user namespace.
func TestSingleMappingInKernelRootless(t *testing.T) {
	testutil.RequireNonRoot(t)
	uid, gid := uint32(os.Getuid()), uint32(os.Getgid())
	r := Mappings{
		UIDs: []specs.LinuxIDMapping{{ContainerID: 1000, HostID: uid, Size: 1}},
		GIDs: []specs.LinuxIDMapping{{ContainerID: 1000, HostID: gid, Size: 1}},
	}
	out, dir := runInUserNS(t, r, 1000, 1000, "cat /proc/self/uid_map; id -u; touch f")
	if want := formatMap(r.UIDs); !strings.HasPrefix(normalise(out), want) {
		t.Errorf("child saw:\n%s\nwant uid_map %s", out, want)
	}
	fi, err := os.Stat(filepath.Join(dir, "f"))
	if err != nil {
		t.Fatal(err)
	}
	if st := fi.Sys().(*syscall.Stat_t); st.Uid != uid {
		t.Errorf("file owned by %d on the host, want %d", st.Uid, uid)
	}
}
