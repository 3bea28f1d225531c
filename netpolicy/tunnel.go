package netpolicy

import (
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentbox/agentbox/netpolicy/bridge"
)

// relay copies both ways between client and up until both directions have
// ended, half-closing each side as its peer finishes sending. A tunnel that
// moves no byte either way for idle is closed. It returns the bytes sent
// from client to up and from up to client.
//
// The copy method follows what is fastest on Linux: between a unix socket
// and TCP, io.Copy on the concrete conns uses splice(2); between two TCP
// sockets, a user-space copy with a 64 KiB buffer beats splice on loopback.
func relay(client, up net.Conn, idle time.Duration) (upBytes, downBytes int64) {
	act := newActivity(client, up)
	stop := watchIdle(idle, act, func() { client.Close(); up.Close() })
	defer stop()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); upBytes = pipe(up, client, act) }()
	go func() { defer wg.Done(); downBytes = pipe(client, up, act) }()
	wg.Wait()
	return upBytes, downBytes
}

// pipe copies src to dst; at src's EOF it half-closes dst, on an error it
// closes both so that the other direction ends too.
func pipe(dst, src net.Conn, act *activity) int64 {
	var n int64
	var err error
	if act.stamped {
		n, err = copyStamped(dst, src, act)
	} else {
		n, err = io.Copy(dst, src)
	}
	bridge.FinishHalf(dst, src, err)
	return n
}

var copyBufs = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

// copyStamped is a user-space copy that records activity on every read.
func copyStamped(dst io.Writer, src io.Reader, act *activity) (int64, error) {
	bp := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(bp)
	buf := *bp
	var total int64
	for {
		n, rerr := src.Read(buf)
		if n > 0 {
			act.stamp()
			w, werr := dst.Write(buf[:n])
			total += int64(w)
			if werr != nil {
				return total, werr
			}
		}
		if errors.Is(rerr, io.EOF) {
			return total, nil
		}
		if rerr != nil {
			return total, rerr
		}
	}
}

// activity tells how long a tunnel has been idle: from the kernel's TCP_INFO
// of a TCP side when the copy is spliced (no user-space read to observe), or
// from stamps the user-space copy leaves.
type activity struct {
	stamped bool
	last    atomic.Int64 // unix nanos of the last read, when stamped
	tcp     *net.TCPConn // the side whose TCP_INFO is read, when not stamped
}

func newActivity(client, up net.Conn) *activity {
	a := &activity{}
	ct, cIsTCP := client.(*net.TCPConn)
	ut, uIsTCP := up.(*net.TCPConn)
	_, cIsUnix := client.(*net.UnixConn)
	_, uIsUnix := up.(*net.UnixConn)
	switch {
	case uIsTCP && cIsUnix && tcpInfoWorks(ut):
		a.tcp = ut
	case cIsTCP && uIsUnix && tcpInfoWorks(ct):
		a.tcp = ct
	default:
		a.stamped = true
	}
	a.stamp()
	return a
}

func (a *activity) stamp() { a.last.Store(time.Now().UnixNano()) }

func (a *activity) idleFor() time.Duration {
	if a.stamped {
		return time.Since(time.Unix(0, a.last.Load()))
	}
	d, ok := tcpIdle(a.tcp)
	if !ok {
		return 0 // the socket is gone; the copies are ending on their own
	}
	return d
}

// watchIdle calls fire once the tunnel has been idle for idle. The returned
// func stops the watch.
func watchIdle(idle time.Duration, act *activity, fire func()) (stop func()) {
	tick := min(max(idle/4, 10*time.Millisecond), 30*time.Second)
	t := time.NewTicker(tick)
	done := make(chan struct{})
	go func() {
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if act.idleFor() >= idle {
					fire()
					return
				}
			}
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(done) }) }
}
