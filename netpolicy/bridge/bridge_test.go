package bridge

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"testing"
)

// fakeGateway answers one HTTP request per connection on a unix socket.
func fakeGateway(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "gw.sock")
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				if req, err := http.ReadRequest(bufio.NewReader(c)); err == nil && req.Method == "GET" {
					io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
					return
				}
			}()
		}
	}()
	return path
}

func echoSocket(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "echo.sock")
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				io.Copy(c, c)
				c.(*net.UnixConn).CloseWrite()
				c.Close()
			}()
		}
	}()
	return path
}

func startBridge(t *testing.T, socket string) *Bridge {
	t.Helper()
	b, err := Listen(Config{Socket: socket})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return b
}

// TestBridgeBothFamilies: 127.0.0.1 and ::1 on the same port reach the
// gateway socket.
func TestBridgeBothFamilies(t *testing.T) {
	b := startBridge(t, fakeGateway(t))
	if len(b.Addrs()) != 2 {
		t.Fatalf("listening on %v", b.Addrs())
	}
	for _, host := range []string{"127.0.0.1", "[::1]"} {
		resp, err := http.Get("http://" + host + ":" + strconv.Itoa(b.Port()) + "/")
		if err != nil {
			t.Fatalf("%s: %v", host, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(body) != "ok" {
			t.Errorf("%s: %q", host, body)
		}
	}
}

// TestBridgeHalfClose: a client that shuts its write side still receives
// everything the far side sends afterwards.
func TestBridgeHalfClose(t *testing.T) {
	b := startBridge(t, echoSocket(t))
	c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(b.Port()))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	payload := make([]byte, 1<<20)
	for i := range payload {
		payload[i] = byte(i * 7)
	}
	go func() {
		c.Write(payload)
		c.(*net.TCPConn).CloseWrite()
	}()
	got, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(payload) {
		t.Errorf("echoed %d bytes, want %d identical ones", len(got), len(payload))
	}
}

// TestBridgeGatewayDown: with no gateway behind it, a connection is closed
// rather than left hanging.
func TestBridgeGatewayDown(t *testing.T) {
	b := startBridge(t, filepath.Join(t.TempDir(), "absent.sock"))
	c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(b.Port()))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if n, err := c.Read(make([]byte, 1)); err == nil {
		t.Errorf("read %d bytes from a bridge with no gateway", n)
	}
}

func TestListenErrors(t *testing.T) {
	for _, cfg := range []Config{{Port: -1, Socket: "/x"}, {Port: 70000, Socket: "/x"}, {Socket: ""}, {Socket: "/x", Addrs: []string{"localhost"}}, {Socket: "/x", Addrs: []string{"192.0.2.1"}}} {
		if b, err := Listen(cfg); err == nil {
			b.Close()
			t.Errorf("Listen(%+v) succeeded", cfg)
		}
	}
}
