//go:build !linux

package denials

import (
	"errors"
	"os"
	"time"
)

// errNotLinux is the answer off Linux: seccomp, its user notification and
// the syscall numbers the summaries name are Linux's.
var errNotLinux = errors.New("the denial log needs Linux seccomp user notification; on macOS agentbox runs the agent as a dedicated account (--isolation user), under a Seatbelt profile that logs no denial to agentbox")

// table is empty off Linux: there is no Linux syscall number to name.
var table = map[string]syscall{}

// KernelSupport says that this host has no seccomp user notification.
func KernelSupport() error { return errNotLinux }

func receive(int) (seccompNotif, error) { return seccompNotif{}, errNotLinux }

func refuse(int, uint64) error { return errNotLinux }

// cloneFlags and ptraceRequests are empty off Linux, as table is.
var (
	cloneFlags     []flag
	ptraceRequests = map[uint64]string{}
)

// Off Linux there is no kernel audit subsystem to read Landlock's records
// from (nor Landlock): the watch says so through openAuditReader.
type auditReader struct{}

type auditRecord struct {
	Type uint16
	Text string
}

type auditStatus struct{ Enabled, Lost uint32 }

var errStopped = errors.New("stopped")

func openAuditReader() (*auditReader, error) { return nil, errNotLinux }

func readAuditStatus() (auditStatus, error) { return auditStatus{}, errNotLinux }

func (*auditReader) read([]byte, *os.File, time.Duration) (auditRecord, error) {
	return auditRecord{}, errNotLinux
}

func (*auditReader) close() {}

// AuditEnabled and SetAuditEnabled have no kernel audit to ask off Linux.
func AuditEnabled() (bool, error) { return false, errNotLinux }

// SetAuditEnabled reports, as AuditEnabled does, that there is none.
func SetAuditEnabled(bool) (bool, error) { return false, errNotLinux }

// stillWaiting has no notification to ask about: seccomp's user
// notifications are Linux's.
func stillWaiting(int, uint64) bool { return false }
