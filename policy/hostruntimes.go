package policy

import "fmt"

// DefaultRuntimes are the OCI runtimes agentbox chooses from when the
// policy names none, best first: crun starts a sandbox about three times
// faster than runc on the same bundle (docs/bench.md), and both run the
// same self-test. The launcher looks each up on its PATH (Host.Runtimes).
var DefaultRuntimes = []string{"crun", "runc"}

// SelfTestVerdict is what the last self-test on one runtime binary on
// this host said.
type SelfTestVerdict string

// The verdicts; "" is none yet.
const (
	SelfTestPassed SelfTestVerdict = "passed"
	SelfTestFailed SelfTestVerdict = "failed"
)

// InstalledRuntime is one runtime of DefaultRuntimes found on the
// launcher's PATH, with what agentbox knows of it on this host.
type InstalledRuntime struct {
	// Name is the runtime's name (crun, runc) and Path where PATH has it.
	Name, Path string
	// SelfTest is the verdict of the last self-test that ran on this very
	// binary here (the launcher keeps it in its runtime-facts cache until
	// the binary or the package database changes); "" when none has.
	SelfTest SelfTestVerdict
	// Run is the id of the run that gave SelfTest.
	Run string
}

// How a plan's runtime was chosen (Runtime.Chosen).
const (
	ChosenPolicy  = "policy"  // --runtime, or runtime: in a policy file
	ChosenDefault = "default" // ChooseRuntime, from the host's facts
)

// ChooseRuntime is the default runtime for host h, when the policy names
// none, and the reason, in words for the run's record: crun where it is
// installed, can run for this user and has not failed its last self-test
// here; runc otherwise. A failed self-test refuses its own run (as any
// failure does); it only stops crun from being the default of the runs
// after it, until a self-test on crun passes (agentbox selftest --runtime
// crun) or crun or the package database changes.
func ChooseRuntime(h Host, workspace string) (name, reason string) {
	crun, ok := h.installed("crun")
	switch {
	case !ok:
		return "runc", "crun is not installed (apt-get install crun would make it the default: it starts about three times faster)"
	case h.HybridCgroup && h.EUID != 0:
		return "runc", "crun is installed, but it refuses this hybrid cgroup host's v2 hierarchy, which only root can hide from it (run as root, or pass --runtime runc)"
	case crunCannotEnter(h, workspace):
		return "runc", "crun is installed, but " + crunWorkspaceWhy(workspace)
	case crun.SelfTest == SelfTestFailed:
		return "runc", fmt.Sprintf("crun at %s failed the self-test of run %s on this host; runc is the default until a self-test on crun passes (agentbox selftest --runtime crun)", crun.Path, crun.Run)
	case crun.SelfTest == SelfTestPassed:
		return "crun", fmt.Sprintf("crun at %s is installed and passed the self-test of run %s on this host; it starts about three times faster than runc%s", crun.Path, crun.Run, h.hybridNote())
	default:
		return "crun", fmt.Sprintf("crun at %s is installed and has run no self-test on this host yet (this run's is its first); it starts about three times faster than runc%s", crun.Path, h.hybridNote())
	}
}

// crunCannotEnter reports whether crun, as root, would fail to make the
// mounts inside the workspace (the protected paths, the covers of its
// sockets, the launcher's canary socket): it makes them as the sandbox's
// root, a host uid that a root-owned workspace closed to others does not
// let in, and that the workspace grant (given to the agent's uid) does not
// reach. runc makes the same mounts without that lookup.
func crunCannotEnter(h Host, workspace string) bool {
	if h.EUID != 0 || workspace == "" {
		return false
	}
	fi, err := h.FS.Stat(workspace)
	return err == nil && fi.UID == 0 && fi.Mode.Perm()&0o001 == 0
}

func crunWorkspaceWhy(workspace string) string {
	return fmt.Sprintf("the workspace %s is root's and closed to others: crun makes the mounts inside it (protected paths, socket covers) as the sandbox's root, which the workspace grant does not reach, and fails; runc does not", workspace)
}

func (h Host) hybridNote() string {
	if h.HybridCgroup {
		return "; the hybrid cgroup layout's v2 hierarchy is hidden from it in a mount namespace of its own"
	}
	return ""
}

func (h Host) installed(name string) (InstalledRuntime, bool) {
	for _, r := range h.Runtimes {
		if r.Name == name && r.Path != "" {
			return r, true
		}
	}
	return InstalledRuntime{}, false
}
