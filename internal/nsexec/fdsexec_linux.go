package nsexec

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// fdsMain runs the runtime call argv. For a create it receives the files,
// inserts --preserve-fds, and runs the runtime as a child (in a mount
// namespace of its own when a mount is hidden or nested binds are laid
// out: StartInMountNS), whose exit status it returns; anything else is
// executed in place.
func fdsMain(flags map[string]string, argv []string) int {
	for f := range flags {
		if !slices.Contains(fdsFlags, f) {
			fmt.Fprintf(os.Stderr, "agentbox %s: unknown flag %s\n", FdsExec, f)
			return 4
		}
	}
	if v, ok := flags["--stderr"]; ok && v != "stdout" {
		fmt.Fprintf(os.Stderr, "agentbox %s: --stderr %q: only stdout\n", FdsExec, v)
		return 4
	}
	verb := CreateVerb(argv)
	if verb < 0 {
		err := syscall.Exec(argv[0], argv, os.Environ())
		fmt.Fprintf(os.Stderr, "agentbox %s: exec %s: %v\n", FdsExec, argv[0], err)
		return 4
	}
	code, err := runCreate(flags, argv, verb)
	if err != nil {
		fmt.Fprintf(os.Stderr, "agentbox %s: %v\n", FdsExec, err)
		return 4
	}
	return code
}

func runCreate(flags map[string]string, argv []string, verb int) (int, error) {
	var files []*os.File
	if sock := flags["--fds-socket"]; sock != "" {
		var err error
		if files, err = ReceiveFds(sock); err != nil {
			return 0, fmt.Errorf("receive the sandbox's files from %s: %w", sock, err)
		}
	}
	args := slices.Concat(argv[:verb+1], []string{"--preserve-fds", strconv.Itoa(len(files))}, argv[verb+1:])
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if flags["--stderr"] == "stdout" {
		cmd.Stderr = os.Stdout // the runtime hands its stdio to the sandbox
	}
	cmd.ExtraFiles = files
	umount, hiding := flags["--umount"]
	file, composing := flags["--compose"]
	var err error
	if hiding || composing {
		err = StartInMountNS(cmd, umount, file)
	} else {
		err = cmd.Start()
	}
	if err == nil {
		err = cmd.Wait()
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal()), nil
		}
		return exit.ExitCode(), nil
	}
	return 0, err
}

// ReceiveFds connects to the launcher's socket and receives the files it
// sends in one message (at most MaxFds).
func ReceiveFds(path string) ([]*os.File, error) {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	if err := unix.Connect(fd, &unix.SockaddrUnix{Name: path}); err != nil {
		return nil, err
	}
	buf := make([]byte, 1)
	oob := make([]byte, unix.CmsgSpace(MaxFds*4))
	n, oobn, _, _, err := unix.Recvmsg(fd, buf, oob, unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		return nil, err
	}
	fds, err := parseRights(oob[:oobn])
	if err != nil {
		return nil, err
	}
	if n != 1 || int(buf[0]) != len(fds) {
		closeFds(fds)
		return nil, fmt.Errorf("the launcher announced %d file(s) and sent %d", buf[0], len(fds))
	}
	files := make([]*os.File, len(fds))
	for i, f := range fds {
		files[i] = os.NewFile(uintptr(f), "sandbox-fd-"+strconv.Itoa(3+i))
	}
	return files, nil
}

func parseRights(oob []byte) ([]int, error) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil, err
	}
	var fds []int
	for _, m := range msgs {
		got, err := unix.ParseUnixRights(&m)
		if err != nil {
			closeFds(fds)
			return nil, err
		}
		fds = append(fds, got...)
	}
	return fds, nil
}

func closeFds(fds []int) {
	for _, f := range fds {
		unix.Close(f)
	}
}

// fdsFlags are FdsExec's flags: --fds-socket PATH (the launcher's socket;
// none receives nothing), --umount PATH and --compose FILE as mntns-exec
// takes them, and --stderr stdout (the sandbox's stderr is its stdout:
// the shim was given no stderr, and the launcher one file as both, whose
// order a second pipe would lose), applied to the create only.
var fdsFlags = []string{"--fds-socket", "--umount", "--compose", "--stderr"}
