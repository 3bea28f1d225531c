package audit

import (
	"errors"
	"os"
)

func errorsAs(err error, target any) bool { return errors.As(err, target) }

// weakSuffix is what the weak.json fixture's inline profile yields: it allows
// what agentbox denies when the seccomp package can compare, unknown when not.
func weakSuffix() string {
	if _, known := seccompWeak(nil); known {
		return ""
	}
	return " unknown"
}

var _ = os.Getenv
