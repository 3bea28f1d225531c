package engine

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/sys/unix"
)

// This file is the one way root walks a tree the agent can write (the
// workspace it was granted, a run directory): by file descriptors, never
// by path. The root is opened once; every entry is opened relative to the
// fd of the directory holding it with openat2(RESOLVE_BENEATH |
// RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV), checked
// against what fstatat saw, and changed only through its own fd. A symlink
// is never followed, a mount point (another file system, or a bind mount of
// the same one) is never entered, and no path string is built for a system
// call, so a tree deeper than PATH_MAX is walked like any other. Swapping a
// directory for a symlink (renameat2 RENAME_EXCHANGE) while the walk runs
// makes the walk skip that entry; it cannot send it outside the tree.

// walkResolve is how every entry is resolved relative to its directory.
const walkResolve = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS | unix.RESOLVE_NO_XDEV

// maxWalkDirFDs bounds the directory fds one walk holds open. Deeper, the
// shallowest open directories are closed and reopened on the way back up.
const maxWalkDirFDs = 128

// errChanged says an entry was replaced between fstatat and open.
var errChanged = errors.New("changed while it was being walked")

// node is one inode met by a walk.
type node struct {
	parent int    // fd of the directory holding it; -1 for the root
	name   string // its name there
	// fd is open on the node itself: a directory O_RDONLY|O_DIRECTORY, a
	// regular file or FIFO O_RDONLY|O_NONBLOCK|O_NOCTTY, anything else
	// O_PATH. It is -1 for non-directories when the walk opens no files.
	fd int
	st unix.Stat_t
}

func (n *node) kind() uint32 { return n.st.Mode & unix.S_IFMT }
func (n *node) isDir() bool  { return n.kind() == unix.S_IFDIR }

// hasData reports whether fd is a real fd (not O_PATH), so that its ACL and
// mode can be read and set through it.
func (n *node) hasData() bool {
	k := n.kind()
	return n.fd >= 0 && (k == unix.S_IFDIR || k == unix.S_IFREG || k == unix.S_IFIFO)
}

// frame is a directory on the walk's stack.
type frame struct {
	node
	buf      []byte
	pos, end int
	off      int64 // d_off of the last entry taken: where a reopen resumes
	eof      bool
	lost     bool // could not be reopened: the rest of it is not walked
}

// walker walks one tree. visit is called for every node, the root first,
// a directory before its entries; leave, when set, for every directory
// after its entries (with parent open). Either may return an error, which
// is recorded against the node's path and, with stopOnError, ends the walk.
type walker struct {
	visit       func(n *node) error
	leave       func(n *node) error
	openFiles   bool
	stopOnError bool
	// skipChanged records an entry replaced mid-walk as skipped rather
	// than as an error (the grant does; revoke and removal retry later).
	skipChanged bool
	maxOpen     int

	dev     uint64
	stack   []*frame
	closed  int // frames 1..closed-1 have no fd
	stopped bool

	nodes   int
	skipped list
	errs    list
}

// err joins the recorded errors, nil when there are none.
func (w *walker) err() error {
	if w.errs.len() == 0 {
		return nil
	}
	return errors.New(strings.Join(w.errs.lines(), "; "))
}

// openWalkRoot opens the directory a walk starts from without following a
// symlink in its last component.
func openWalkRoot(path string) (int, unix.Stat_t, error) {
	var st unix.Stat_t
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, st, err
	}
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, st, err
	}
	return fd, st, nil
}

// run walks the tree under root (an open directory fd, left open).
func (w *walker) run(root int, st unix.Stat_t) {
	if w.maxOpen <= 0 {
		w.maxOpen = maxWalkDirFDs
	}
	w.dev = st.Dev
	w.closed = 1
	top := &frame{node: node{parent: -1, name: ".", fd: root, st: st}}
	w.nodes++
	w.call(w.visit, &top.node)
	w.stack = append(w.stack, top)
	defer w.closeAll()
	for len(w.stack) > 0 && !w.stopped {
		f := w.stack[len(w.stack)-1]
		name, err := w.next(f)
		switch {
		case err != nil:
			w.fail(f, err)
			f.eof = true
		case name == "":
			w.pop()
		default:
			w.enter(f, name)
		}
	}
}

// closeAll closes what a stopped walk still holds, except the root.
func (w *walker) closeAll() {
	for i, f := range w.stack {
		if i > 0 {
			closeFD(f.fd)
		}
	}
	w.stack = nil
}

// call runs fn on n and records its error.
func (w *walker) call(fn func(*node) error, n *node) {
	if fn == nil {
		return
	}
	if err := fn(n); err != nil {
		w.errs.add(fmt.Sprintf("%s: %v", w.where(n.name), err))
		w.stopped = w.stopOnError
	}
}

func (w *walker) fail(f *frame, err error) {
	w.errs.add(fmt.Sprintf("%s: %v", w.where(""), err))
	w.stopped = w.stopOnError
}

// enter opens one entry of f, visits it and, for a directory, pushes it.
func (w *walker) enter(f *frame, name string) {
	n, err := w.open(f.fd, name)
	switch {
	case errors.Is(err, unix.ENOENT):
		return // gone since it was listed
	case errors.Is(err, errChanged) && w.skipChanged:
		w.skipped.add(w.where(name) + ": " + err.Error())
		return
	case errors.Is(err, errSkip):
		w.skipped.add(w.where(name) + ": " + err.Error())
		return
	case err != nil:
		w.errs.add(fmt.Sprintf("%s: %v", w.where(name), err))
		w.stopped = w.stopOnError
		return
	}
	w.nodes++
	w.call(w.visit, n)
	if !n.isDir() {
		closeFD(n.fd)
		return
	}
	w.push(&frame{node: *n})
}

// open opens name in dir as the walk needs it and checks that what was
// opened is what fstatat saw.
func (w *walker) open(dir int, name string) (*node, error) {
	n := &node{parent: dir, name: name, fd: -1}
	if err := unix.Fstatat(dir, name, &n.st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return nil, err
	}
	if n.st.Dev != w.dev {
		return nil, skipError("on another file system (a mount point): not entered")
	}
	flags := unix.O_PATH | unix.O_NOFOLLOW
	switch n.kind() {
	case unix.S_IFDIR:
		flags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW
	case unix.S_IFREG, unix.S_IFIFO:
		flags = unix.O_RDONLY | unix.O_NONBLOCK | unix.O_NOCTTY | unix.O_NOFOLLOW
	}
	if !w.openFiles && !n.isDir() {
		return n, nil
	}
	fd, err := unix.Openat2(dir, name, &unix.OpenHow{Flags: uint64(flags | unix.O_CLOEXEC), Resolve: walkResolve})
	switch {
	case errors.Is(err, unix.EXDEV):
		return nil, skipError("a mount point: not entered")
	case errors.Is(err, unix.ELOOP), errors.Is(err, unix.ENOTDIR), errors.Is(err, unix.ENXIO):
		return nil, errChanged
	case err != nil:
		return nil, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, err
	}
	if st.Dev != n.st.Dev || st.Ino != n.st.Ino || st.Mode&unix.S_IFMT != n.kind() {
		unix.Close(fd)
		return nil, errChanged
	}
	n.fd, n.st = fd, st
	return n, nil
}

// push puts a directory on the stack, closing the shallowest open one
// (never the root) when too many are open.
func (w *walker) push(f *frame) {
	w.stack = append(w.stack, f)
	if len(w.stack)-w.closed+1 <= w.maxOpen || w.closed >= len(w.stack)-1 {
		return
	}
	c := w.stack[w.closed]
	unix.Close(c.fd)
	c.fd, c.buf, c.pos, c.end = -1, nil, 0, 0
	w.closed++
}

// pop ends the top directory: its parent is reopened if it was closed,
// leave is called, and its fd closed (the root's fd belongs to the caller).
func (w *walker) pop() {
	f := w.stack[len(w.stack)-1]
	w.stack = w.stack[:len(w.stack)-1]
	if len(w.stack) == 0 {
		return
	}
	p := w.stack[len(w.stack)-1]
	if p.fd < 0 && !p.lost {
		w.reopen(len(w.stack)-1, f.fd)
	}
	if w.leave != nil && p.fd >= 0 {
		f.parent = p.fd
		w.call(w.leave, &f.node)
	}
	closeFD(f.fd)
}

// reopen gives frame i an fd again: through ".." of its child (checked to
// be the same directory), else down from the nearest open ancestor by
// name, each step checked; then it resumes reading where it stopped.
func (w *walker) reopen(i, child int) {
	f := w.stack[i]
	fd, err := reopenParent(child, &f.st)
	if err != nil {
		fd, err = w.reopenDown(i)
	}
	if err == nil {
		_, err = unix.Seek(fd, f.off, 0)
	}
	if err != nil {
		closeFD(fd)
		f.lost, f.eof = true, true
		w.errs.add(fmt.Sprintf("%s: reopening the directory: %v (the rest of it was not walked)", w.where(""), err))
		return
	}
	f.fd = fd
	if w.closed > i {
		w.closed = i
	}
}

func reopenParent(child int, want *unix.Stat_t) (int, error) {
	if child < 0 {
		return -1, errChanged
	}
	fd, err := unix.Openat(child, "..", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	if err := sameInode(fd, want); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// reopenDown opens frame i from the nearest ancestor that is open.
func (w *walker) reopenDown(i int) (int, error) {
	j := i - 1
	for w.stack[j].fd < 0 {
		j--
	}
	fd := w.stack[j].fd
	for k := j + 1; k <= i; k++ {
		next, err := unix.Openat2(fd, w.stack[k].name, &unix.OpenHow{Flags: unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC, Resolve: walkResolve})
		if err == nil {
			err = sameInode(next, &w.stack[k].st)
		}
		if fd != w.stack[j].fd {
			unix.Close(fd)
		}
		if err != nil {
			closeFD(next)
			return -1, err
		}
		fd = next
	}
	return fd, nil
}

func sameInode(fd int, want *unix.Stat_t) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if st.Dev != want.Dev || st.Ino != want.Ino {
		return errChanged
	}
	return nil
}

// next returns the next entry name of f, "" at its end.
func (w *walker) next(f *frame) (string, error) {
	for !f.eof {
		if f.pos >= f.end {
			if f.buf == nil {
				f.buf = make([]byte, 8192)
			}
			n, err := unix.Getdents(f.fd, f.buf)
			if err != nil {
				return "", err
			}
			if n == 0 {
				f.eof = true
				break
			}
			f.pos, f.end = 0, n
		}
		name, off, reclen := parseDirent(f.buf[f.pos:f.end])
		if reclen == 0 {
			return "", errors.New("malformed directory entry")
		}
		f.pos += reclen
		f.off = off
		if name != "." && name != ".." {
			return name, nil
		}
	}
	return "", nil
}

// parseDirent decodes the linux_dirent64 at the start of b.
func parseDirent(b []byte) (name string, off int64, reclen int) {
	const nameAt = 19 // d_ino u64, d_off s64, d_reclen u16, d_type u8
	if len(b) < nameAt {
		return "", 0, 0
	}
	reclen = int(binary.NativeEndian.Uint16(b[16:]))
	if reclen < nameAt || reclen > len(b) {
		return "", 0, 0
	}
	off = int64(binary.NativeEndian.Uint64(b[8:]))
	raw := b[nameAt:reclen]
	if i := strings.IndexByte(string(raw), 0); i >= 0 {
		raw = raw[:i]
	}
	return string(raw), off, reclen
}

func closeFD(fd int) {
	if fd >= 0 {
		unix.Close(fd)
	}
}

// where names an entry of the top directory for messages only: it is
// never passed to a system call, and it is shortened when long.
func (w *walker) where(name string) string {
	parts := make([]string, 0, len(w.stack)+1)
	for _, f := range w.stack[min(1, len(w.stack)):] {
		parts = append(parts, printable(f.name))
	}
	if name != "" && name != "." {
		parts = append(parts, printable(name))
	}
	p := "./" + strings.Join(parts, "/")
	if len(p) > 240 {
		p = strings.ToValidUTF8(p[:100], "") + fmt.Sprintf("/…(%d levels)…/", len(parts)) + strings.ToValidUTF8(p[len(p)-100:], "")
	}
	return p
}
