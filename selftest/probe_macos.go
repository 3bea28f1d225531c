package selftest

import (
	"errors"
	"fmt"
	"strings"

	"golang.org/x/sys/unix"
)

// darwinProbes are the probes only darwin's catalog holds: checks of the
// layers that stand in there for Linux's (the Seatbelt profile, the
// account's file permissions), which policy's darwin residuals name. The
// probe child of the starter runs them under the same profile as the
// agent (launcher/userstarter.go). The code is portable and tested on
// Linux against directories, files and sockets of the test's own; only
// darwin's catalog runs it (cross-compiled, never run on a Mac).
func darwinProbes() []Probe {
	return []Probe{
		seatbeltWriteProbe(seatbeltWriteDirs),
		bpfDeviceProbe(bpfDevices),
		mdnsResponderProbe(mDNSResponderSocket),
	}
}

// seatbeltWriteDirs are macOS's world-writable sticky directories, real
// paths (Seatbelt matches those): their mode lets every user create a
// file, and the profile allows writes only below the run's home, TMPDIR
// and the workspace, so only Seatbelt can refuse there.
var seatbeltWriteDirs = []string{"/private/tmp", "/private/var/tmp", "/Users/Shared"}

// seatbeltWriteProbe creates a file in each world-writable directory of
// dirs and removes it at once. The mode bits allow it, so EPERM is the
// profile's refusal (DENY); a file created is ALLOW; any other answer
// (EACCES from an ACL, EROFS) does not show the profile and is UNKNOWN, as
// is a host where none of dirs is world-writable.
func seatbeltWriteProbe(dirs []string) Probe {
	summary := "create a file where the mode bits allow it but the Seatbelt profile does not: " + strings.Join(dirs, ", ")
	return Probe{Name: "seatbelt-write-denied", Group: GroupFilesystem, Expect: Deny, Summary: summary, run: func(*Env) outcome {
		var w worst
		var skipped []string
		for _, d := range dirs {
			var st unix.Stat_t
			switch err := unix.Stat(d, &st); {
			case err != nil:
				skipped = append(skipped, d+": "+errnoName(err))
				continue
			case st.Mode&unix.S_IFMT != unix.S_IFDIR || st.Mode&0o002 == 0:
				skipped = append(skipped, fmt.Sprintf("%s: mode %o is not a world-writable directory, so its mode bits would refuse too", d, st.Mode&0o7777))
				continue
			}
			err := createAndRemove(d)
			dec, o := decideSeatbeltWrite(err)
			w.add(dec, o, "create in "+d+": "+errnoName(err))
		}
		if w.decision == "" {
			return outcome{
				target: strings.Join(dirs, ","), decision: Unknown, observed: "no-world-writable-dir",
				detail: "no directory to try where only the profile could refuse: " + strings.Join(skipped, "; "),
			}
		}
		return w.outcome(strings.Join(dirs, ","))
	}}
}

// decideSeatbeltWrite decides a create the mode bits allow: EPERM is
// Seatbelt's denial (a sandbox refusal is EPERM, the mode's EACCES).
func decideSeatbeltWrite(err error) (Decision, string) {
	switch {
	case err == nil:
		return Allow, "created"
	case errors.Is(err, unix.EPERM):
		return Deny, "EPERM"
	}
	return Unknown, errnoName(err)
}

// bpfDevices are the first of darwin's Berkeley Packet Filter nodes, the
// link layer's only door (darwin has no AF_PACKET): opened by name,
// since the profile lets the agent list no directory.
var bpfDevices = []string{"/dev/bpf0", "/dev/bpf1", "/dev/bpf2", "/dev/bpf3"}

// bpfDeviceProbe opens each node read-only and closes it at once, with no
// interface attached (nothing is captured).
func bpfDeviceProbe(nodes []string) Probe {
	summary := "open(2) of the packet filter nodes " + strings.Join(nodes, ", ") + " read-only, closed at once"
	return Probe{Name: "bpf-device-denied", Group: GroupKernel, Expect: Deny, Summary: summary, run: func(*Env) outcome {
		var w worst
		for _, n := range nodes {
			err := openClose(n, unix.O_RDONLY)
			if errors.Is(err, unix.ENOENT) {
				continue
			}
			d, o := decideBPFOpen(err)
			w.add(d, o, "open "+n+": "+errnoName(err))
		}
		if w.decision == "" {
			return outcome{target: "/dev/bpf*", decision: Unknown, observed: "no-bpf-node", detail: "none of " + strings.Join(nodes, ", ") + " exists, which a Mac always has: the probe cannot tell"}
		}
		return w.outcome("/dev/bpf*")
	}}
}

// decideBPFOpen: an open is ALLOW, and so is EBUSY, which the device
// answers only after every permission check passed (another program holds
// it); EPERM (the profile) and EACCES (root's 0600 mode) are DENY.
func decideBPFOpen(err error) (Decision, string) {
	switch {
	case err == nil:
		return Allow, "opened"
	case errors.Is(err, unix.EBUSY):
		return Allow, "busy-after-permission"
	case errors.Is(err, unix.EPERM), errors.Is(err, unix.EACCES):
		return Deny, errnoName(err)
	}
	return Unknown, errnoName(err)
}

// mDNSResponderSocket is where macOS programs reach the resolver daemon
// (the real path of /var/run/mDNSResponder, as the profile names it).
const mDNSResponderSocket = "/private/var/run/mDNSResponder"

// mdnsResponderProbe connects to the resolver daemon's socket and closes
// it without sending: the daemon resolves on its clients' behalf, out of
// the pf fence's sight, so only the profile's deny closes DNS there.
func mdnsResponderProbe(path string) Probe {
	summary := "connect(2) to mDNSResponder's socket " + path + ", closed at once (nothing sent)"
	return Probe{Name: "mdnsresponder-unreachable", Group: GroupNetwork, Expect: Deny, Summary: summary, run: func(*Env) outcome {
		err := connectUnix(path)
		d, o := decideResolverConnect(err)
		return outcome{target: path, decision: d, observed: o, detail: "connect " + path + ": " + errnoName(err)}
	}}
}

// connectUnix connects a stream socket to path and closes it.
func connectUnix(path string) error {
	fd, err := socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.Connect(fd, &unix.SockaddrUnix{Name: path})
}

// decideResolverConnect: a connection is ALLOW, and so is ECONNREFUSED
// (the connect passed the profile; no daemon listened); EPERM and EACCES
// are DENY; a socket that is not there does not show the profile, UNKNOWN.
func decideResolverConnect(err error) (Decision, string) {
	switch {
	case err == nil:
		return Allow, "connected"
	case errors.Is(err, unix.ECONNREFUSED):
		return Allow, "refused-after-permission"
	case errors.Is(err, unix.EPERM), errors.Is(err, unix.EACCES):
		return Deny, errnoName(err)
	case errors.Is(err, unix.ENOENT):
		return Unknown, "absent"
	}
	return Unknown, errnoName(err)
}
