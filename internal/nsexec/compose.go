package nsexec

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// Composition lists the bind mounts that lie below another bind's
// destination (a --rw-bind inside the workspace, a protected path, the
// cover over a workspace socket). The runtime cannot make them itself: it
// mounts as the sandbox's root, which may not search a workspace that
// only its owner, or an ACL for the agent, lets in. So the helper, root in
// the runtime's own mount namespace, lays each one onto a private clone
// of its parent there, and the runtime binds the parent recursively.
// Nothing of it is visible outside that namespace, which ends with the
// runtime's create.
type Composition struct {
	Parents []Parent `json:"parents"`
}

// Parent is one bind whose source gets the nested mounts.
type Parent struct {
	// Source is the parent bind's host path (a resolved path: no symlink).
	Source string `json:"source"`
	// Mounts are laid onto it in order (a mount before those below it).
	Mounts []Nested `json:"mounts"`
}

// Nested is one mount below a Parent.
type Nested struct {
	// Source is the host path to bind.
	Source string `json:"source"`
	// Beneath, when set, is Source relative to the parent's source: the
	// source lies in the parent (agent-writable) and is opened below it,
	// never through a symlink.
	Beneath string `json:"beneath,omitempty"`
	// Target is where it goes, relative to the parent's source; it must
	// exist already (nothing is created) and is reached without a symlink.
	Target string `json:"target"`
	// ReadOnly makes the mount read-only; every nested mount is nosuid
	// and nodev.
	ReadOnly bool `json:"read_only,omitempty"`
}

// maxComposition bounds the composition file the helper reads.
const maxComposition = 4 << 20

// ReadComposition reads a composition file.
func ReadComposition(path string) (*Composition, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxComposition+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxComposition {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, maxComposition)
	}
	var c Composition
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &c, nil
}
