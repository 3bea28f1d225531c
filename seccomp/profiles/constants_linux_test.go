package profiles

import (
	"testing"

	"golang.org/x/sys/unix"
)

// TestConstantsMatchTheKernelHeaders checks the values this package spells
// out against golang.org/x/sys/unix, which is generated from the UAPI headers.
func TestConstantsMatchTheKernelHeaders(t *testing.T) {
	for _, c := range []struct {
		name      string
		ours, sys uint64
	}{
		{"CLONE_NEWNS", cloneNewNS, unix.CLONE_NEWNS},
		{"CLONE_NEWCGROUP", cloneNewCgroup, unix.CLONE_NEWCGROUP},
		{"CLONE_NEWUTS", cloneNewUTS, unix.CLONE_NEWUTS},
		{"CLONE_NEWIPC", cloneNewIPC, unix.CLONE_NEWIPC},
		{"CLONE_NEWUSER", cloneNewUser, unix.CLONE_NEWUSER},
		{"CLONE_NEWPID", cloneNewPID, unix.CLONE_NEWPID},
		{"CLONE_NEWNET", cloneNewNet, unix.CLONE_NEWNET},
		{"AF_UNIX", afUnix, unix.AF_UNIX},
		{"AF_INET", afInet, unix.AF_INET},
		{"AF_INET6", afInet6, unix.AF_INET6},
		{"AF_NETLINK", afNetlink, unix.AF_NETLINK},
		{"AF_PACKET", afPacket, unix.AF_PACKET},
		{"SOCK_STREAM", sockStream, unix.SOCK_STREAM},
		{"SOCK_DGRAM", sockDgram, unix.SOCK_DGRAM},
		{"SOCK_RAW", sockRaw, unix.SOCK_RAW},
		{"SOCK_SEQPACKET", sockSeqpacket, unix.SOCK_SEQPACKET},
		{"SOCK_PACKET", sockPacket, unix.SOCK_PACKET},
		{"NETLINK_ROUTE", netlinkRoute, unix.NETLINK_ROUTE},
		{"NETLINK_SOCK_DIAG", netlinkSockDiag, unix.NETLINK_SOCK_DIAG},
		{"NETLINK_AUDIT", netlinkAudit, unix.NETLINK_AUDIT},
		{"NETLINK_KOBJECT_UEVENT", netlinkKobjectUevent, unix.NETLINK_KOBJECT_UEVENT},
		{"EPERM", errnoEPERM, uint64(unix.EPERM)},
		{"ENOSYS", errnoENOSYS, uint64(unix.ENOSYS)},
	} {
		if c.ours != c.sys {
			t.Errorf("%s = %#x here, %#x in x/sys/unix", c.name, c.ours, c.sys)
		}
	}
	if sockNonblockCloexec := uint64(unix.SOCK_NONBLOCK | unix.SOCK_CLOEXEC); sockNonblockCloexec&sockTypeMask != 0 {
		t.Errorf("the socket type mask %#x overlaps SOCK_NONBLOCK|SOCK_CLOEXEC", sockTypeMask)
	}
}
