package engine

import (
	"syscall"

	"golang.org/x/sys/unix"
)

const syscallNoFollow = syscall.O_NOFOLLOW

// ioctlGetTermios reads a terminal's settings.
const ioctlGetTermios = unix.TCGETS
