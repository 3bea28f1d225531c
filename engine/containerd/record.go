package containerd

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/agentbox/agentbox/engine"
)

// RecordFile is the file, in a run's bundle, where the engine records the
// daemon the run uses, before it creates anything there: agentbox gc reads
// it to clean a crashed run on that daemon (see Recorded).
const RecordFile = "containerd.json"

// Record is what RecordFile holds.
type Record struct {
	// Address is the daemon's socket; Namespace is agentbox's namespace
	// on it.
	Address   string `json:"address"`
	Namespace string `json:"namespace"`
	// Container is set before the daemon is asked for the container:
	// without it, the daemon holds nothing of the run.
	Container bool `json:"container,omitempty"`
	// ShimPid and ShimBundle are the task's shim process and its bundle
	// directory, once the task exists; teardown proves both gone.
	ShimPid    int    `json:"shim_pid,omitempty"`
	ShimBundle string `json:"shim_bundle,omitempty"`
}

func writeRecord(bundle string, r Record) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return engine.WriteFileAtomic(filepath.Join(bundle, RecordFile), append(data, '\n'), 0o600)
}

// ReadRecord reads a bundle's record; ok is false when the bundle has
// none (the run was not on containerd, or never got that far).
func ReadRecord(bundle string) (r Record, ok bool, err error) {
	data, err := os.ReadFile(filepath.Join(bundle, RecordFile))
	if errors.Is(err, fs.ErrNotExist) {
		return Record{}, false, nil
	}
	if err != nil {
		return Record{}, false, err
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return Record{}, false, fmt.Errorf("%s: %w", filepath.Join(bundle, RecordFile), err)
	}
	return r, true, nil
}

// Recorded is the Opener of the run whose bundle is given, when that run
// used containerd: the engine on the daemon it recorded. ok is false for
// a run of another engine.
func Recorded(bundle string) (open engine.Opener, ok bool) {
	r, ok, err := ReadRecord(bundle)
	if err != nil {
		// A damaged record still says the run was containerd's; the
		// default daemon is the best guess, and teardown says what it found.
		return Opener(DefaultAddress), true
	}
	if !ok {
		return nil, false
	}
	return Opener(r.Address), true
}
