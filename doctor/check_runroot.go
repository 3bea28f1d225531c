package doctor

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
)

// RunRootFacts is the filesystem under the run root `agentbox run` would
// use (launcher.DoctorRunRoot): every run creates and removes some fifty
// files there and fsyncs its id lease, which a disk makes slower.
type RunRootFacts struct {
	// Path is the run root; "" when the caller did not name one.
	Path string `json:"path,omitempty"`
	// Probed is the directory statfs(2) asked: Path, or its nearest
	// existing ancestor when Path does not exist yet (agentbox creates it
	// there).
	Probed string `json:"probed,omitempty"`
	// FSType is statfs's f_type; FSName its name ("" when unknown).
	FSType int64  `json:"fs_type,omitempty"`
	FSName string `json:"fs_name,omitempty"`
	// Rootless is whether the run root belongs to an ordinary user.
	Rootless bool `json:"rootless,omitempty"`
	// XDG is whether the path came from XDG_RUNTIME_DIR.
	XDG bool `json:"xdg,omitempty"`
	// Err is why statfs failed.
	Err string `json:"err,omitempty"`
}

// Filesystem magic numbers (statfs(2) f_type, linux/magic.h).
const (
	fsTmpfs = 0x01021994
	fsRamfs = 0x858458f6
)

var fsNames = map[int64]string{
	fsTmpfs:    "tmpfs",
	fsRamfs:    "ramfs",
	0xEF53:     "ext2/3/4",
	0x58465342: "xfs",
	0x9123683E: "btrfs",
	0x2FC12FC1: "zfs",
	0xF2F52010: "f2fs",
	0x794C7630: "overlayfs",
	0x6969:     "nfs",
	0x65735546: "fuse",
	0x01021997: "9p",
	0x5346544E: "ntfs",
}

// gatherRunRoot statfs's the run root p, or the nearest ancestor that
// exists.
func gatherRunRoot(h Host, p string) RunRootFacts {
	f := RunRootFacts{Path: p, Rootless: h.Sys.EUID() != 0}
	if p == "" {
		return f
	}
	if x := h.Sys.Getenv("XDG_RUNTIME_DIR"); f.Rootless && h.Sys.Getenv("AGENTBOX_RUN_ROOT") == "" && x != "" && filepath.Join(x, "agentbox") == p {
		f.XDG = true
	}
	dir := filepath.Clean(p)
	for {
		fi, err := h.Sys.Statfs(dir)
		if err == nil {
			f.Probed, f.FSType, f.FSName = dir, fi.Type, fsNames[fi.Type]
			return f
		}
		parent := filepath.Dir(dir)
		if !errors.Is(err, fs.ErrNotExist) || parent == dir {
			f.Err = err.Error()
			return f
		}
		dir = parent
	}
}

// runRootOptions are the mount options of a run root on its own tmpfs:
// root-owned, mode 0711 (what agentbox itself creates, and what its
// run-root check accepts: owned by the user, writable by no one else),
// nosuid and nodev. A noexec mount works as well: the gateway socket's
// bind carries noexec itself (runc's read-only remount of it in the user
// namespace keeps the flag locked there), and the containerd shim's
// runtime in the bundle is a link to agentbox-init, whose own mount is the
// one that counts.
const runRootOptions = "mode=0711,nosuid,nodev"

func runRootMount(p string) string { return "mount -t tmpfs -o " + runRootOptions + " tmpfs " + p }

func checkRunRoot(f *Facts) []Result {
	rr := f.RunRoot
	r := Result{ID: "run-root"}
	switch {
	case rr.Path == "":
		r.Status, r.Detail = Unknown, "the run root agentbox would use was not determined"
		r.Fix = "agentbox doctor (the CLI names the run root)"
		return []Result{r}
	case rr.Err != "":
		r.Status, r.Detail = Unknown, "cannot statfs the run root "+rr.Path+": "+rr.Err
		r.Fix = "stat -f " + rr.Path
		return []Result{r}
	}
	name := rr.FSName
	if name == "" {
		name = fmt.Sprintf("filesystem type 0x%x", rr.FSType)
	}
	where := rr.Path + " is on " + name
	if rr.Probed != filepath.Clean(rr.Path) {
		where = fmt.Sprintf("%s does not exist yet; agentbox creates it in %s, on %s", rr.Path, rr.Probed, name)
	}
	if rr.FSType == fsTmpfs || rr.FSType == fsRamfs {
		r.Status, r.Detail = Pass, where+": run directories, id leases and runtime state stay in memory and a reboot clears them"
		return []Result{r}
	}
	r.Status = Warn
	r.Detail = where + ", not a tmpfs: every run creates and removes some fifty files there and fsyncs its id lease on disk, which makes each launch slower (on a test VM 270 ms against 178 ms on a tmpfs), and state a crash leaves survives a reboot until agentbox gc removes it"
	switch {
	case rr.Rootless && rr.XDG:
		r.Fix = "XDG_RUNTIME_DIR is not a tmpfs: log in through systemd-logind (pam_systemd makes /run/user/UID a tmpfs of your own), or set AGENTBOX_RUN_ROOT to a directory on a tmpfs that only you can write and whose parent no one else can write (not /dev/shm itself, which everyone can write)"
	case rr.Rootless:
		r.Fix = "set XDG_RUNTIME_DIR (log in through systemd-logind, which makes /run/user/UID a tmpfs of your own) or AGENTBOX_RUN_ROOT to a directory on a tmpfs that only you can write and whose parent no one else can write (not /dev/shm itself, which everyone can write)"
	default:
		r.Fix = fmt.Sprintf("as root, with no run live (agentbox gc first): mkdir -p %[1]s && %[2]s; to keep it across reboots add \"tmpfs %[1]s tmpfs %[3]s 0 0\" to /etc/fstab (not AGENTBOX_RUN_ROOT=/dev/shm/...: everyone can write /dev/shm)", rr.Path, runRootMount(rr.Path), runRootOptions)
	}
	return []Result{r}
}
