package userns

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// RootlessMode says how a rootless sandbox's ids are mapped.
type RootlessMode string

// The two rootless modes.
const (
	// RootlessSubIDs maps the user's own ids to the agent's and container
	// ids 0..N-1 onto the user's subuid/subgid range (needs newuidmap and
	// newgidmap, which the runtime calls).
	RootlessSubIDs RootlessMode = "subids"
	// RootlessSingle maps only the user's own uid and gid to the agent's;
	// every other container id is unmapped (and shows as the overflow id).
	RootlessSingle RootlessMode = "single"
)

// RootlessInput is what RootlessMappings needs to know. It is plain data so
// that every case can be tested without the host.
type RootlessInput struct {
	Name     string // the invoking user's name, to find its subuid/subgid entries
	UID, GID uint32 // the invoking user's uid and primary gid
	AgentUID uint32 // the agent's uid inside the sandbox
	AgentGID uint32 // the agent's gid inside the sandbox
	SubUIDs  []SubIDEntry
	SubGIDs  []SubIDEntry // all entries of /etc/subuid and /etc/subgid; filtered here
	NewIDMap bool         // newuidmap and newgidmap are both on PATH (see HaveNewIDMap)
}

// Rootless is the result of RootlessMappings: the mappings, the mode used
// and, in RootlessSingle mode, why the subordinate ids were not used (for the
// ledger's residuals).
type Rootless struct {
	Mappings
	Mode   RootlessMode
	Reason string
}

// RootlessMappings maps the invoking user's own uid and gid to the agent's.
// When the user has both a subuid and a subgid entry and newuidmap/newgidmap
// exist, container ids 0..count-1 of the first entry of each are added around
// the agent's id (MapRange with keep = the user's id); otherwise the result is
// the single mapping and Reason says what was missing. The user's ids must not
// be 0: a rootless sandbox never maps to host root.
func RootlessMappings(in RootlessInput) (Rootless, error) {
	if in.UID == 0 || in.GID == 0 {
		return Rootless{}, fmt.Errorf("rootless mapping for uid %d gid %d: %w", in.UID, in.GID, ErrHostRoot)
	}
	subU, subG := Owned(in.SubUIDs, in.Name, in.UID), Owned(in.SubGIDs, in.Name, in.UID)
	reason := ""
	switch {
	case len(subU) == 0 || len(subG) == 0:
		reason = fmt.Sprintf("user %s has no entry in /etc/subuid and /etc/subgid (usermod --add-subuids 200000-265535 --add-subgids 200000-265535 %s)", in.Name, in.Name)
	case !in.NewIDMap:
		reason = "newuidmap/newgidmap not found (apt-get install uidmap)"
	}
	if reason != "" {
		return Rootless{Mappings: single(in), Mode: RootlessSingle, Reason: reason}, nil
	}
	m, err := subIDMappings(subU[0], subG[0], in)
	if err != nil {
		return Rootless{}, err
	}
	return Rootless{Mappings: m, Mode: RootlessSubIDs}, nil
}

// subIDMappings maps the agent onto the user's own ids around the subuid
// entry u and subgid entry g.
func subIDMappings(u, g SubIDEntry, in RootlessInput) (Mappings, error) {
	um, err := MapRange(u.Start, u.Count, in.AgentUID, &in.UID)
	if err != nil {
		return Mappings{}, fmt.Errorf("uid mapping over /etc/subuid range %d+%d: %w", u.Start, u.Count, err)
	}
	gm, err := MapRange(g.Start, g.Count, in.AgentGID, &in.GID)
	if err != nil {
		return Mappings{}, fmt.Errorf("gid mapping over /etc/subgid range %d+%d: %w", g.Start, g.Count, err)
	}
	return Mappings{UIDs: um, GIDs: gm}, nil
}

func single(in RootlessInput) Mappings {
	return Mappings{
		UIDs: []specs.LinuxIDMapping{{ContainerID: in.AgentUID, HostID: in.UID, Size: 1}},
		GIDs: []specs.LinuxIDMapping{{ContainerID: in.AgentGID, HostID: in.GID, Size: 1}},
	}
}

// CurrentRootless is RootlessMappings for the invoking user: it reads
// subuid and subgid under etc (normally "/etc"; missing files count as
// empty) and looks for newuidmap/newgidmap on PATH.
func CurrentRootless(etc string, agentUID, agentGID uint32) (Rootless, error) {
	in := RootlessInput{UID: uint32(os.Getuid()), GID: uint32(os.Getgid()), AgentUID: agentUID, AgentGID: agentGID, NewIDMap: HaveNewIDMap()}
	if u, err := user.Current(); err == nil { // without a passwd entry, entries by uid still match
		in.Name = u.Username
	}
	var err error
	if in.SubUIDs, err = readFile(filepath.Join(etc, "subuid"), true, ParseSubIDs); err != nil {
		return Rootless{}, err
	}
	if in.SubGIDs, err = readFile(filepath.Join(etc, "subgid"), true, ParseSubIDs); err != nil {
		return Rootless{}, err
	}
	return RootlessMappings(in)
}

// HaveNewIDMap reports whether newuidmap and newgidmap are both on PATH.
func HaveNewIDMap() bool {
	_, errU := exec.LookPath("newuidmap")
	_, errG := exec.LookPath("newgidmap")
	return errU == nil && errG == nil
}
