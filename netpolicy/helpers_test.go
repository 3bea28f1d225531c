package netpolicy

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// testResolver maps names to addresses. A name with several answers returns
// them in turn (the last one repeats), which models a name whose second
// resolution changes. It never asks a real DNS server.
type testResolver struct {
	mu      sync.Mutex
	answers map[string][][]netip.Addr
	calls   map[string]int
}

func newTestResolver(m map[string][]string) *testResolver {
	r := &testResolver{answers: map[string][][]netip.Addr{}, calls: map[string]int{}}
	for name, seq := range m {
		for _, answer := range seq {
			var addrs []netip.Addr
			for _, a := range strings.Split(answer, ",") {
				addrs = append(addrs, netip.MustParseAddr(a))
			}
			r.answers[name] = append(r.answers[name], addrs)
		}
	}
	return r
}

func (r *testResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	seq, ok := r.answers[host]
	if !ok {
		return nil, fmt.Errorf("test resolver: no such host %s", host)
	}
	i := min(r.calls[host], len(seq)-1)
	r.calls[host]++
	return seq[i], nil
}

func (r *testResolver) count(host string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[host]
}

// testDialer connects only to loopback: an address in its map is redirected
// to a local listener, a loopback address is dialed as is, and anything else
// is refused without touching the network. It records every address asked.
type testDialer struct {
	mu     sync.Mutex
	routes map[string]string
	dialed []string
}

func (d *testDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	d.mu.Lock()
	d.dialed = append(d.dialed, addr)
	to, ok := d.routes[addr]
	d.mu.Unlock()
	if !ok {
		ap, err := netip.ParseAddrPort(addr)
		if err != nil || !ap.Addr().IsLoopback() {
			return nil, fmt.Errorf("test dialer: refusing %s (not mapped, not loopback)", addr)
		}
		to = addr
	}
	var nd net.Dialer
	return nd.DialContext(ctx, network, to)
}

func (d *testDialer) route(from, to string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.routes == nil {
		d.routes = map[string]string{}
	}
	d.routes[from] = to
}

func (d *testDialer) asked() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.dialed...)
}

// syncBuffer is a goroutine-safe decision-log sink.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// decisions parses the log lines written so far.
func (s *syncBuffer) decisions(t testing.TB) []Decision {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Decision
	sc := bufio.NewScanner(bytes.NewReader(s.b.Bytes()))
	for sc.Scan() {
		var d Decision
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			t.Fatalf("decision log line %q: %v", sc.Text(), err)
		}
		out = append(out, d)
	}
	return out
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// testGateway is a gateway on a loopback TCP port with a test resolver,
// dialer and log.
type testGateway struct {
	*Gateway
	addr     string
	resolver *testResolver
	dialer   *testDialer
	log      *syncBuffer
	host     *testHost
}

// testHost stands for the addresses on the host's interfaces, which the
// proxy refuses: documentation addresses no other rule refuses.
type testHost struct {
	mu    sync.Mutex
	addrs []netip.Addr
	err   error
}

var testHostAddrs = []string{"198.51.100.1", "2001:db8:1::1"}

func newTestHost() *testHost {
	h := &testHost{}
	for _, a := range testHostAddrs {
		h.addrs = append(h.addrs, netip.MustParseAddr(a))
	}
	return h
}

func (h *testHost) list() ([]netip.Addr, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]netip.Addr(nil), h.addrs...), h.err
}

func (h *testHost) set(addrs []netip.Addr, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.addrs, h.err = addrs, err
}

const testToken = "agentbox-gw-test-token-0123456789"

func startGateway(t testing.TB, cfg Config, names map[string][]string, env map[string]string) *testGateway {
	t.Helper()
	if cfg.RunID == "" {
		cfg.RunID = "run-test"
	}
	if cfg.Token == "" {
		cfg.Token = testToken
	}
	tg := &testGateway{resolver: newTestResolver(names), dialer: &testDialer{}, log: &syncBuffer{}, host: newTestHost()}
	g, err := New(cfg, WithResolver(tg.resolver), WithDialer(tg.dialer), WithLogWriter(tg.log),
		WithGetenv(func(k string) string { return env[k] }), WithHostAddrs(tg.host.list))
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = g.Serve(l) }()
	t.Cleanup(func() { g.Close() })
	tg.Gateway, tg.addr = g, l.Addr().String()
	return tg
}

// rawRequest sends raw bytes to the gateway and returns the response head
// and body (read until the connection closes or a full response is read).
func (tg *testGateway) rawRequest(t testing.TB, raw string) *http.Response {
	t.Helper()
	c, err := net.Dial("tcp", tg.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.Write([]byte(raw)); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("reading the answer to %q: %v", raw, err)
	}
	return resp
}

// healthy asserts that the gateway still answers its health route.
func (tg *testGateway) healthy(t testing.TB) {
	t.Helper()
	resp, err := http.Get("http://" + tg.addr + HealthPath)
	if err != nil {
		t.Fatalf("health after the case: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("health after the case: %s", resp.Status)
	}
}

// testCA is a certificate authority made for one test, with a leaf for the
// given names.
type testCA struct {
	pool    *x509.CertPool
	pemFile string
	leaf    tls.Certificate
}

func newTestCA(t testing.TB, names ...string) *testCA {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "agentbox test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	leafTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: names[0]},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, KeyUsage: x509.KeyUsageDigitalSignature,
	}
	for _, n := range names {
		if a, err := netip.ParseAddr(n); err == nil {
			leafTmpl.IPAddresses = append(leafTmpl.IPAddresses, a.AsSlice())
		} else {
			leafTmpl.DNSNames = append(leafTmpl.DNSNames, n)
		}
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, caCert, &leafKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca := &testCA{pool: x509.NewCertPool(), pemFile: filepath.Join(t.TempDir(), "ca.pem")}
	ca.pool.AddCert(caCert)
	if err := os.WriteFile(ca.pemFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	ca.leaf = tls.Certificate{Certificate: [][]byte{leafDER}, PrivateKey: leafKey}
	return ca
}
