package selftest

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// errnoName names err by its errno ("EPERM") when it has one, "ok" for nil,
// and by its text otherwise.
func errnoName(err error) string {
	if err == nil {
		return "ok"
	}
	var en unix.Errno
	if errors.As(err, &en) {
		if n := unix.ErrnoName(en); n != "" {
			return n
		}
		return fmt.Sprintf("errno-%d", int(en))
	}
	return err.Error()
}

// denied are the errnos by which the kernel, seccomp or an LSM refuse an
// operation. ENOSYS counts: the call does not exist for this process, either
// because a filter says so or because the kernel was built without it.
var denied = []unix.Errno{unix.EPERM, unix.EACCES, unix.ENOSYS}

// decideSyscall decides a syscall probe from the call's error. nil means the
// call succeeded; an errno in reached means the call passed the permission
// checks and failed later, on arguments chosen so that it must (EFAULT on a
// bad pointer, EBADF on a bad fd, EINVAL on an invalid option): the operation
// is allowed. A denied errno means refusal; anything else is UNKNOWN.
func decideSyscall(err error, reached ...unix.Errno) (Decision, string) {
	if err == nil {
		return Allow, "succeeded"
	}
	var en unix.Errno
	if !errors.As(err, &en) {
		return Unknown, errnoName(err)
	}
	switch {
	case slices.Contains(reached, en):
		return Allow, errnoName(en)
	case slices.Contains(denied, en):
		return Deny, errnoName(en)
	}
	return Unknown, errnoName(en)
}

// decideWrite decides a write attempt on a file or directory: success is
// ALLOW, a refusal or a read-only filesystem DENY, a missing file DENY
// ("absent": nothing there to write to).
func decideWrite(err error) (Decision, string) {
	switch {
	case err == nil:
		return Allow, "writable"
	case errors.Is(err, unix.ENOENT), errors.Is(err, unix.ENOTDIR):
		return Deny, "absent"
	case errors.Is(err, unix.EROFS):
		return Deny, "EROFS"
	}
	d, o := decideSyscall(err)
	if d == Allow {
		return Unknown, o
	}
	return d, o
}

// decideRead decides a read attempt: success is ALLOW ("readable"), refusal
// DENY, absence DENY ("absent").
func decideRead(err error) (Decision, string) {
	switch {
	case err == nil:
		return Allow, "readable"
	case errors.Is(err, os.ErrNotExist), errors.Is(err, unix.ENOTDIR):
		return Deny, "absent"
	}
	d, o := decideSyscall(err)
	if d == Allow {
		return Unknown, o
	}
	return d, o
}

// worst combines the decisions of several checks of one probe: any ALLOW
// makes the probe ALLOW (the boundary leaks somewhere), else any UNKNOWN
// makes it UNKNOWN, else DENY. No checks at all is UNKNOWN.
type worst struct {
	decision Decision
	observed []string
	detail   []string
}

// add records one check: its decision, its observation and a line of detail.
func (w *worst) add(d Decision, observed, detail string) {
	rank := map[Decision]int{"": 0, Deny: 1, Unknown: 2, Allow: 3}
	if rank[d] > rank[w.decision] {
		w.decision = d
		w.observed = nil
	}
	if d == w.decision && !slices.Contains(w.observed, observed) {
		w.observed = append(w.observed, observed)
	}
	if !slices.Contains(w.detail, detail) {
		w.detail = append(w.detail, detail)
	}
}

// otherwise records a DENY only when no check was recorded before: the
// summary line of a probe whose checks found nothing.
func (w *worst) otherwise(observed, detail string) {
	if w.decision == "" {
		w.add(Deny, observed, detail)
	}
}

// outcome returns the combined outcome for target.
func (w *worst) outcome(target string) outcome {
	if w.decision == "" {
		return outcome{target: target, decision: Unknown, observed: "nothing-checked", detail: strings.Join(w.detail, "; ")}
	}
	return outcome{target: target, decision: w.decision, observed: strings.Join(w.observed, ","), detail: strings.Join(w.detail, "; ")}
}
