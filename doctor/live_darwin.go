package doctor

import (
	"context"
	"errors"
)

// liveDarwin: this host is a Mac.
const liveDarwin = true

// LandlockABI is 0 on darwin: Landlock is a Linux LSM.
func (liveSystem) LandlockABI() (int, error) { return 0, nil }

// NewUserNamespace is not tried on darwin, which has no namespaces.
func (liveSystem) NewUserNamespace(context.Context) error {
	return errors.Join(errProbeNotRun, errors.New("darwin has no user namespaces; agentbox runs the agent as a dedicated account there (--isolation user)"))
}

// Statfs is not judged on darwin: its f_type numbers are not Linux's.
func (liveSystem) Statfs(string) (FSInfo, error) {
	return FSInfo{}, errors.New("statfs types are not judged on darwin")
}
