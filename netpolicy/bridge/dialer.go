package bridge

import (
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"syscall"
)

// A dialer hands the bridge its gateway connections over a unix socket
// instead of a bind-mounted socket path, for a sandbox kernel that refuses
// host sockets (gVisor's Sentry with --host-uds=none: no host socket is
// reachable from inside, the gateway's included). For each relay the
// bridge writes one request byte on the dialer connection; the launcher's
// end (ServeDialer) connects to the gateway socket on the host and answers
// with one byte, carrying the connected socket as SCM_RIGHTS on success.

const (
	dialRequest = 'd'
	dialOK      = 'k'
	dialFailed  = 'x'
)

// Dialer is the bridge's end of a dialer connection.
type Dialer struct {
	mu   sync.Mutex
	conn *net.UnixConn
}

// NewDialer wraps f, a connected unix stream socket (init's fd 4); f is
// closed once wrapped.
func NewDialer(f *os.File) (*Dialer, error) {
	defer f.Close()
	c, err := net.FileConn(f)
	if err != nil {
		return nil, fmt.Errorf("bridge dialer: %w", err)
	}
	uc, ok := c.(*net.UnixConn)
	if !ok {
		c.Close()
		return nil, errors.New("bridge dialer: not a unix socket")
	}
	return &Dialer{conn: uc}, nil
}

// Dial asks the launcher for one connection to the gateway.
func (d *Dialer) Dial() (net.Conn, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, err := d.conn.Write([]byte{dialRequest}); err != nil {
		return nil, fmt.Errorf("bridge dialer: request: %w", err)
	}
	b := make([]byte, 1)
	oob := make([]byte, syscall.CmsgSpace(4))
	n, oobn, _, _, err := d.conn.ReadMsgUnix(b, oob)
	if err != nil {
		return nil, fmt.Errorf("bridge dialer: answer: %w", err)
	}
	if n != 1 {
		return nil, errors.New("bridge dialer: the launcher closed the dialer")
	}
	fds, err := rights(oob[:oobn])
	if err != nil {
		return nil, err
	}
	if b[0] != dialOK || len(fds) != 1 {
		for _, fd := range fds {
			syscall.Close(fd)
		}
		return nil, errors.New("bridge dialer: the launcher could not reach the gateway")
	}
	f := os.NewFile(uintptr(fds[0]), "gateway")
	defer f.Close()
	return net.FileConn(f)
}

// Close closes the dialer connection.
func (d *Dialer) Close() error { return d.conn.Close() }

func rights(oob []byte) ([]int, error) {
	if len(oob) == 0 {
		return nil, nil
	}
	msgs, err := syscall.ParseSocketControlMessage(oob)
	if err != nil {
		return nil, fmt.Errorf("bridge dialer: control message: %w", err)
	}
	var fds []int
	for _, m := range msgs {
		got, err := syscall.ParseUnixRights(&m)
		if err != nil {
			return nil, fmt.Errorf("bridge dialer: rights: %w", err)
		}
		fds = append(fds, got...)
	}
	return fds, nil
}

// ServeDialer answers the requests arriving on c, the launcher's end of a
// dialer connection, with connections to the unix socket at socket, until
// c closes. It connects to socket and to nothing else, whatever it is sent.
func ServeDialer(c *net.UnixConn, socket string) error {
	b := make([]byte, 1)
	for {
		if _, err := c.Read(b); err != nil {
			return nil // init is gone
		}
		if b[0] != dialRequest {
			return fmt.Errorf("bridge dialer: unexpected byte %#x", b[0])
		}
		if err := answer(c, socket); err != nil {
			return err
		}
	}
}

func answer(c *net.UnixConn, socket string) error {
	g, err := net.Dial("unix", socket)
	if err != nil {
		_, werr := c.Write([]byte{dialFailed})
		return werr
	}
	defer g.Close()
	f, err := g.(*net.UnixConn).File()
	if err != nil {
		_, werr := c.Write([]byte{dialFailed})
		return werr
	}
	defer f.Close()
	_, _, err = c.WriteMsgUnix([]byte{dialOK}, syscall.UnixRights(int(f.Fd())), nil)
	return err
}
