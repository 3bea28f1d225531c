// Package loopback raises the loopback interface of the current network
// namespace. OCI runtimes leave lo down in a new network namespace; a
// sandbox whose loopback is down cannot reach the gateway's local bridge
// nor prove its own network stack works. It is small on purpose: it runs
// as a createContainer hook inside every sandbox.
package loopback

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// Up sets IFF_UP on lo.
func Up() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("loopback: socket: %w", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return fmt.Errorf("loopback: %w", err)
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("loopback: get flags: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("loopback: set flags: %w", err)
	}
	return nil
}
