package selftest

import "golang.org/x/sys/unix"

// inode returns the inode number of p.
func inode(p string) (uint64, error) {
	var st unix.Stat_t
	if err := unix.Stat(p, &st); err != nil {
		return 0, err
	}
	return st.Ino, nil
}
