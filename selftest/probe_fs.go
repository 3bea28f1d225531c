package selftest

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

func filesystemProbes() []Probe {
	return []Probe{
		dirWriteProbe("root-not-writable", "/"),
		dirWriteProbe("etc-not-writable", "/etc"),
		dirWriteProbe("usr-not-writable", "/usr"),
		fileWriteProbe("core-pattern-not-writable", "/proc/sys/kernel/core_pattern"),
		fileWriteProbe("sysrq-trigger-not-writable", "/proc/sysrq-trigger"),
		fileWriteProbe("uevent-helper-not-writable", "/sys/kernel/uevent_helper"),
		{
			Name: "release-agent-not-writable", Group: GroupFilesystem, Expect: Deny, run: probeReleaseAgent,
			Summary: "no cgroup v1 release_agent can be opened for writing",
		},
		fileReadProbe("kcore-unreadable", "/proc/kcore"),
		{
			Name: "proc-keys-unreadable", Group: GroupFilesystem, Expect: Deny, run: probeProcKeys, shares: reading(mountTable),
			Summary: "/proc/keys is masked or unreadable",
		},
		{
			Name: "kernel-cmdline-hidden", Group: GroupFilesystem, Expect: Deny, run: probeBootFacts,
			Summary: "/proc/cmdline, /proc/bootconfig and /proc/config.gz read empty or not at all",
		},
		{
			Name: "kallsyms-addresses-hidden", Group: GroupFilesystem, Expect: Deny, run: probeKallsyms,
			Summary: "/proc/kallsyms shows no kernel addresses",
		},
		{
			Name: "device-nodes-minimal", Group: GroupFilesystem, Expect: Deny, run: probeDevices,
			Summary: "/dev holds no device beyond the allowed set",
		},
	}
}

// dirWriteProbe tries to create a file in dir: an unnamed O_TMPFILE, which
// vanishes on close, or where the filesystem lacks it a named file that is
// removed at once.
func dirWriteProbe(name, dir string) Probe {
	summary := "create a file in " + dir
	return Probe{Name: name, Group: GroupFilesystem, Expect: Deny, Summary: summary, run: func(*Env) outcome {
		err := tryCreateIn(dir)
		d, o := decideWrite(err)
		return outcome{target: dir, decision: d, observed: o, detail: summary + ": " + errnoName(err)}
	}}
}

// createAndRemove creates a file of a random name in dir, exclusively,
// and removes it at once.
func createAndRemove(dir string) error {
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	p := filepath.Join(dir, ".agentbox-probe-"+hex.EncodeToString(rnd[:]))
	fd, err := unix.Open(p, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return err
	}
	unix.Close(fd)
	return unix.Unlink(p)
}

// fileWriteProbe opens p for writing and closes it without writing: opening
// is where procfs and sysfs check permission; nothing is written.
func fileWriteProbe(name, p string) Probe {
	summary := "open " + p + " for writing (nothing is written)"
	return Probe{Name: name, Group: GroupFilesystem, Expect: Deny, Summary: summary, run: func(*Env) outcome {
		err := openClose(p, unix.O_WRONLY)
		d, o := decideWrite(err)
		return outcome{target: p, decision: d, observed: o, detail: summary + ": " + errnoName(err)}
	}}
}

// fileReadProbe opens p for reading and closes it without reading.
func fileReadProbe(name, p string) Probe {
	summary := "open " + p + " for reading"
	return Probe{Name: name, Group: GroupFilesystem, Expect: Deny, Summary: summary, run: func(*Env) outcome {
		err := openClose(p, unix.O_RDONLY)
		d, o := decideRead(err)
		return outcome{target: p, decision: d, observed: o, detail: summary + ": " + errnoName(err)}
	}}
}

func openClose(p string, flags int) error {
	fd, err := unix.Open(p, flags|unix.O_CLOEXEC|unix.O_NOCTTY|unix.O_NONBLOCK, 0)
	return closeOnSuccess(uintptr(fd), err)
}

func probeReleaseAgent(*Env) outcome {
	var w worst
	paths, _ := filepath.Glob("/sys/fs/cgroup/*/release_agent")
	if _, err := os.Lstat("/sys/fs/cgroup/release_agent"); err == nil {
		paths = append(paths, "/sys/fs/cgroup/release_agent")
	}
	for _, p := range paths {
		d, o := decideWrite(openClose(p, unix.O_WRONLY))
		w.add(d, o, p+": "+o)
	}
	w.otherwise("absent", "no release_agent file under /sys/fs/cgroup")
	return w.outcome("cgroup release_agent")
}

// probeProcKeys: a mount over /proc/keys or a character device in its place
// is the mask; otherwise an open that succeeds is ALLOW.
func probeProcKeys(e *Env) outcome {
	const p = "/proc/keys"
	if mounts, err := e.readMounts(); err == nil {
		if _, ok := findMountPoint(mounts, p); ok {
			return outcome{target: p, decision: Deny, observed: "masked", detail: p + " has a mount over it"}
		}
	}
	var st unix.Stat_t
	if err := unix.Stat(p, &st); err == nil && st.Mode&unix.S_IFMT == unix.S_IFCHR {
		return outcome{target: p, decision: Deny, observed: "masked", detail: p + " is a character device"}
	}
	d, o := decideRead(openClose(p, unix.O_RDONLY))
	return outcome{target: p, decision: d, observed: o, detail: "open " + p + ": " + o}
}

// bootFacts are the host's boot facts that the sandbox must not read: the
// kernel command line and boot configuration (which can hold secrets and
// root= UUIDs) and the kernel's build configuration.
var bootFacts = []string{"/proc/cmdline", "/proc/bootconfig", "/proc/config.gz"}

// probeBootFacts reads one byte of each boot fact: a character device in its
// place (the runtime's /dev/null mask), nothing to read, a refusal or no
// such file is DENY; a byte read is ALLOW.
func probeBootFacts(e *Env) outcome {
	var w worst
	for _, p := range bootFacts {
		d, o := readsAnything(p)
		if k := e.Config.Kernel; k.GVisor && d == Allow && p == "/proc/cmdline" {
			b, err := os.ReadFile(p)
			if err != nil {
				d, o = Unknown, "unreadable"
			} else {
				d, o = decideSentryCmdline(k, b)
			}
		}
		w.add(d, o, p+": "+o)
	}
	return w.outcome("host boot facts")
}

func readsAnything(p string) (Decision, string) {
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOCTTY|unix.O_NONBLOCK, 0)
	if err != nil {
		return decideRead(err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err == nil && st.Mode&unix.S_IFMT == unix.S_IFCHR {
		return Deny, "masked"
	}
	var b [1]byte
	n, err := unix.Read(fd, b[:])
	switch {
	case err != nil:
		return decideRead(err)
	case n == 0:
		return Deny, "empty"
	}
	return Allow, "readable"
}

func findMountPoint(mounts []Mount, p string) (Mount, bool) {
	for _, m := range mounts {
		if m.MountPoint == p {
			return m, true
		}
	}
	return Mount{}, false
}

func probeKallsyms(*Env) outcome {
	const p = "/proc/kallsyms"
	f, err := os.Open(p)
	if err != nil {
		d, o := decideRead(err)
		return outcome{target: p, decision: d, observed: o, detail: "open " + p + ": " + o}
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	lines, nonzero := 0, 0
	for ; lines < 2000 && sc.Scan(); lines++ {
		addr, _, _ := strings.Cut(sc.Text(), " ")
		if strings.Trim(addr, "0") != "" {
			nonzero++
		}
	}
	d, o := decideKallsyms(lines, nonzero)
	return outcome{target: p, decision: d, observed: o, detail: fmt.Sprintf("%d of the first %d symbols have an address", nonzero, lines)}
}

// decideKallsyms: any address shown is ALLOW; none (or no symbols) is DENY.
func decideKallsyms(lines, nonzero int) (Decision, string) {
	switch {
	case nonzero > 0:
		return Allow, "addresses-visible"
	case lines == 0:
		return Deny, "empty"
	}
	return Deny, "zeroed"
}

// defaultDevices are the device numbers any container may have: null, zero,
// full, random, urandom, tty, console, ptmx; and every pts (major 136).
var defaultDevices = []uint64{
	unix.Mkdev(1, 3), unix.Mkdev(1, 5), unix.Mkdev(1, 7), unix.Mkdev(1, 8),
	unix.Mkdev(1, 9), unix.Mkdev(5, 0), unix.Mkdev(5, 1), unix.Mkdev(5, 2),
}

// allowedDevice decides whether a device node is in the allowed set.
func allowedDevice(p string, mode uint32, rdev uint64, extra []string) bool {
	if slices.Contains(extra, p) {
		return true
	}
	if mode&unix.S_IFMT == unix.S_IFBLK {
		return false
	}
	return slices.Contains(defaultDevices, rdev) || unix.Major(rdev) == 136
}

func probeDevices(e *Env) outcome {
	allow := e.Config.AllowDevices
	if e.Config.Kernel.GVisor {
		allow = append(slices.Clone(allow), SentryDevices...) // the Sentry's own devices
	}
	extra, err := devicesBeyond("/dev", unix.Lstat, allow)
	if errors.Is(err, fs.ErrNotExist) {
		return outcome{target: "/dev", decision: Deny, observed: "no-dev", detail: "/dev does not exist"}
	}
	if len(extra) > 0 {
		shown := extra[:min(len(extra), 12)]
		return outcome{
			target: "/dev", decision: Allow, observed: "extra-devices",
			detail: fmt.Sprintf("%d devices beyond the allowed set: %s", len(extra), strings.Join(shown, ",")),
		}
	}
	return outcome{target: "/dev", decision: Deny, observed: "minimal", detail: "only allowed device nodes in /dev"}
}

// devicesBeyond lists the device nodes under dir that the allowed set does
// not hold. Every entry is stat'ed: the type readdir reports is the entry's
// in dir's own filesystem, and an OCI runtime in a user namespace binds each
// device over an empty regular file, so only stat shows the device.
func devicesBeyond(dir string, lstat func(string, *unix.Stat_t) error, allow []string) ([]string, error) {
	var extra []string
	err := filepath.WalkDir(dir, func(p string, de fs.DirEntry, err error) error {
		if err != nil || de.IsDir() {
			return nil
		}
		var st unix.Stat_t
		if lstat(p, &st) != nil {
			return nil
		}
		if kind := st.Mode & unix.S_IFMT; (kind == unix.S_IFCHR || kind == unix.S_IFBLK) && !allowedDevice(p, uint32(st.Mode), uint64(st.Rdev), allow) {
			extra = append(extra, p)
		}
		return nil
	})
	return extra, err
}
