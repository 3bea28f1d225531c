package denials

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// auditStatus is struct audit_status up to the fields agentbox reads; the
// kernel sends more (backlog_wait_time and later), which are ignored.
type auditStatus struct {
	Mask         uint32
	Enabled      uint32 // 0 off, 1 on, 2 on and locked
	Failure      uint32
	PID          uint32 // the audit daemon's, 0 when none
	RateLimit    uint32
	BacklogLimit uint32
	Lost         uint32 // records the kernel dropped since boot
	Backlog      uint32
}

// auditRequest sends one request of type typ on a fresh NETLINK_AUDIT
// socket and returns the payload of the kernel's answer of the same type
// (nil for a request answered only by an ack).
func auditRequest(typ uint16, payload []byte) ([]byte, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_AUDIT)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return nil, err
	}
	msg := make([]byte, unix.NLMSG_HDRLEN, unix.NLMSG_HDRLEN+len(payload))
	*(*unix.NlMsghdr)(unsafe.Pointer(&msg[0])) = unix.NlMsghdr{
		Len: uint32(unix.NLMSG_HDRLEN + len(payload)), Type: typ, Flags: unix.NLM_F_REQUEST | unix.NLM_F_ACK, Seq: 1,
	}
	msg = append(msg, payload...)
	if err := unix.Sendto(fd, msg, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return nil, err
	}
	_ = unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &unix.Timeval{Sec: 5})
	buf := make([]byte, 1<<16)
	for {
		n, _, err := unix.Recvfrom(fd, buf, 0)
		if err != nil {
			return nil, err
		}
		for b := buf[:n]; len(b) >= unix.NLMSG_HDRLEN; {
			h := *(*unix.NlMsghdr)(unsafe.Pointer(&b[0]))
			end := min(int(h.Len), len(b))
			if end < unix.NLMSG_HDRLEN {
				return nil, errors.New("a malformed netlink message")
			}
			data := b[unix.NLMSG_HDRLEN:end]
			switch h.Type {
			case unix.NLMSG_ERROR:
				if len(data) < 4 {
					return nil, errors.New("a short netlink error")
				}
				if e := int32(binary.NativeEndian.Uint32(data)); e != 0 {
					return nil, unix.Errno(-e)
				}
				if typ != auditGet {
					return nil, nil // the ack of a request without an answer
				}
				// AUDIT_GET's answer comes from another kernel thread,
				// before or after the ack.
			case typ:
				return append([]byte(nil), data...), nil
			}
			b = b[min(len(b), (end+unix.NLMSG_ALIGNTO-1)&^(unix.NLMSG_ALIGNTO-1)):]
		}
	}
}

// readAuditStatus asks the kernel for its audit status (AUDIT_GET; root,
// CAP_AUDIT_CONTROL, in the initial user namespace).
func readAuditStatus() (auditStatus, error) {
	data, err := auditRequest(auditGet, nil)
	if err != nil {
		return auditStatus{}, err
	}
	var st auditStatus
	if len(data) < int(unsafe.Sizeof(st)) {
		return st, fmt.Errorf("a short audit status (%d bytes)", len(data))
	}
	st = *(*auditStatus)(unsafe.Pointer(&data[0]))
	return st, nil
}

// AuditEnabled reports whether kernel auditing is on (audit_enabled), the
// condition for the kernel to produce any Landlock record.
func AuditEnabled() (bool, error) {
	st, err := readAuditStatus()
	if err != nil {
		return false, fmt.Errorf("read the kernel's audit status (AUDIT_GET): %w", err)
	}
	return st.Enabled != 0, nil
}

// SetAuditEnabled turns kernel auditing on or off system-wide (AUDIT_SET,
// what `auditctl -e` does) and returns whether it was on. agentbox never
// calls it in a run: the tests do, for their duration, and put the
// previous state back.
func SetAuditEnabled(on bool) (was bool, err error) {
	st, err := readAuditStatus()
	if err != nil {
		return false, err
	}
	want := auditStatus{Mask: auditStatusEnabled}
	if on {
		want.Enabled = 1
	}
	if (st.Enabled != 0) == on {
		return on, nil
	}
	payload := unsafe.Slice((*byte)(unsafe.Pointer(&want)), unsafe.Sizeof(want))
	if _, err := auditRequest(auditSet, payload); err != nil {
		return st.Enabled != 0, fmt.Errorf("AUDIT_SET enabled=%d: %w", want.Enabled, err)
	}
	return st.Enabled != 0, nil
}

// auditReader is a NETLINK_AUDIT socket bound to AUDIT_NLGRP_READLOG: it
// receives a copy of every record the kernel emits while the records still
// go to the audit daemon (or the kernel log) as before. Binding needs
// CAP_AUDIT_READ in the initial user namespace.
type auditReader struct{ fd int }

// openAuditReader binds the read-only multicast group.
func openAuditReader() (*auditReader, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_AUDIT)
	if err != nil {
		return nil, err
	}
	// A burst of denials must not overflow the socket: 4 MiB where the
	// launcher may force it (root), the system's maximum otherwise.
	if unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 4<<20) != nil {
		_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, 4<<20)
	}
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK, Groups: auditNlgrpReadlog}); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return &auditReader{fd: fd}, nil
}

// auditRecord is one record off the socket: its type and its text.
type auditRecord struct {
	Type uint16
	Text string
}

// read waits for the next record, or returns errStopped once stop is
// readable (nil stop: once no record came for quiet). ENOBUFS (the socket
// overflowed: records were lost for this reader) is returned as is; the
// caller counts it and reads on.
func (r *auditReader) read(buf []byte, stop *os.File, quiet time.Duration) (auditRecord, error) {
	for {
		pfd := []unix.PollFd{{Fd: int32(r.fd), Events: unix.POLLIN}}
		timeout := int(quiet / time.Millisecond)
		if stop != nil {
			pfd, timeout = append(pfd, unix.PollFd{Fd: int32(stop.Fd()), Events: unix.POLLIN}), -1
		}
		n, err := unix.Poll(pfd, timeout)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			return auditRecord{}, err
		case n == 0 || stop != nil && pfd[1].Revents != 0:
			return auditRecord{}, errStopped
		}
		n, _, err = unix.Recvfrom(r.fd, buf, unix.MSG_DONTWAIT)
		switch {
		case errors.Is(err, unix.EAGAIN), errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			return auditRecord{}, err
		case n < unix.NLMSG_HDRLEN:
			continue
		}
		return parseAuditMessage(buf[:n]), nil
	}
}

// parseAuditMessage reads one multicast datagram: a netlink header and
// the record's text. The kernel sends one record per datagram; its
// nlmsg_len has not always counted the header, so the text is taken to
// the end of the datagram, up to a NUL.
func parseAuditMessage(b []byte) auditRecord {
	h := *(*unix.NlMsghdr)(unsafe.Pointer(&b[0]))
	text := b[unix.NLMSG_HDRLEN:]
	for i, c := range text {
		if c == 0 {
			text = text[:i]
			break
		}
	}
	return auditRecord{Type: h.Type, Text: string(text)}
}

func (r *auditReader) close() { unix.Close(r.fd) }

var errStopped = errors.New("stopped")
