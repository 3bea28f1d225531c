package advisory

// Condition is one fact about how a sandbox is launched that an attack can
// need (Entry.Needs).
type Condition string

// The conditions an entry can need.
const (
	// NeedsRootfs: the root's content is a directory given with --rootfs,
	// which may be attacker-controlled (an untrusted image, or a directory
	// another sandbox can write while this one starts).
	NeedsRootfs Condition = "rootfs"
	// NeedsNoUserNS: no user namespace, or one that maps host root.
	NeedsNoUserNS Condition = "no-userns"
	// NeedsRootless: the runtime runs as an ordinary user.
	NeedsRootless Condition = "rootless"
	// NeedsExec: a process is started in the running sandbox with the
	// runtime's exec subcommand.
	NeedsExec Condition = "runtime-exec"
)

// Mode is how one sandbox is launched, as far as the table's conditions
// care. The zero value is a root-run launch of the default root without a
// user namespace.
type Mode struct {
	// Rootfs is true with --rootfs; false for the default root, which
	// agentbox builds from read-only binds of the host's system
	// directories and which holds no image.
	Rootfs bool `json:"rootfs"`
	// UserNS is true when the sandbox has a user namespace that does not
	// map host root (every agentbox sandbox has one).
	UserNS bool `json:"userns"`
	// Rootless is true when the runtime runs as an ordinary user.
	Rootless bool `json:"rootless"`
	// Exec is true when processes are started in the running sandbox with
	// the runtime's exec; agentbox never does (its init starts them).
	Exec bool `json:"exec,omitempty"`
}

// Name is the mode as the user chooses it: "default" or "--rootfs".
func (m Mode) Name() string {
	if m.Rootfs {
		return "--rootfs"
	}
	return "default"
}

// condition is how a Condition is decided, and what is said when a mode
// lacks it.
type condition struct {
	holds func(Mode) bool
	// absent says why a mode without the condition is not exposed.
	absent string
}

// conditions is the vocabulary of Entry.Needs.
var conditions = map[Condition]condition{
	NeedsRootfs: {
		holds:  func(m Mode) bool { return m.Rootfs },
		absent: "the default root holds no image (read-only binds of the host's system directories; /dev and /proc made afresh by the runtime, shared with no other container)",
	},
	NeedsNoUserNS: {
		holds:  func(m Mode) bool { return !m.UserNS },
		absent: "the sandbox runs in a user namespace that does not map host root",
	},
	NeedsRootless: {
		holds:  func(m Mode) bool { return m.Rootless },
		absent: "the runtime runs as root, not rootless",
	},
	NeedsExec: {
		holds:  func(m Mode) bool { return m.Exec },
		absent: "agentbox never starts a process with the runtime's exec: its init starts every process in the sandbox",
	},
}

// exposure reports whether m has every condition e needs, and otherwise
// the reason it is not exposed (the first condition missing).
func exposure(e Entry, m Mode) (bool, string) {
	for _, c := range e.Needs {
		if !conditions[c].holds(m) {
			return false, "the attack needs " + e.Attack + "; " + conditions[c].absent
		}
	}
	return true, ""
}
