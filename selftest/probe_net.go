package selftest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

func networkProbes() []Probe {
	return []Probe{
		{
			Name: "only-loopback", Group: GroupNetwork, Expect: Deny, run: probeOnlyLoopback,
			Summary: "the network namespace has no interface but lo",
		},
		{
			Name: "no-default-route", Group: GroupNetwork, Expect: Deny, run: probeDefaultRoute,
			Summary: "no IPv4 or IPv6 default route, and no route to documentation addresses",
		},
		{
			Name: "dns-unresolvable", Group: GroupNetwork, Expect: Deny, run: probeDNS,
			Summary: "no resolver answers",
		},
		{
			Name: "host-loopback-unreachable", Group: GroupNetwork, Expect: Deny, run: probeHostLoopback, shares: reading(loopbackTCP),
			Summary: "the launcher's canary on the host's 127.0.0.1 is not reached",
		},
		{
			Name: "host-abstract-socket-unreachable", Group: GroupNetwork, Expect: Deny, run: probeHostAbstract,
			Summary: "the launcher's canary abstract unix socket is not reached",
		},
		{
			Name: "metadata-unreachable", Group: GroupNetwork, Expect: Deny, run: probeMetadata, shares: reading(loopbackTCP),
			Summary: "link-local cloud metadata endpoints have no route",
		},
	}
}

// Route-lookup defaults: documentation ranges (RFC 5737, RFC 3849) stand for
// "anywhere outside", and the usual metadata endpoints. They are only ever
// route-looked-up, never sent to.
var (
	defaultInternet = []string{"198.51.100.1:443", "[2001:db8::1]:443"}
	defaultMetadata = []string{"169.254.169.254:80", "[fd00:ec2::254]:80"}
)

func probeOnlyLoopback(e *Env) outcome {
	b, err := os.ReadFile(filepath.Join(e.Proc, "self", "net", "dev"))
	if err != nil {
		return outcome{target: "interfaces", decision: Unknown, observed: "net-dev-unreadable", detail: err.Error()}
	}
	var others []string
	for _, n := range parseNetDev(b) {
		if n != "lo" {
			others = append(others, n)
		}
	}
	if len(others) > 0 {
		return outcome{target: "interfaces", decision: Allow, observed: "interfaces", detail: "interfaces besides lo: " + strings.Join(others, ",")}
	}
	return outcome{target: "interfaces", decision: Deny, observed: "lo-only", detail: "only lo in /proc/self/net/dev"}
}

func probeDefaultRoute(e *Env) outcome {
	var w worst
	for _, f := range []struct {
		file string
		has  func([]byte) bool
	}{{"route", hasDefaultRoute4}, {"ipv6_route", hasDefaultRoute6}} {
		b, err := os.ReadFile(filepath.Join(e.Proc, "self", "net", f.file))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			w.add(Deny, "no-route", f.file+": absent (protocol disabled)")
		case err != nil:
			w.add(Unknown, f.file+"-unreadable", err.Error())
		case f.has(b):
			w.add(Allow, "default-route", f.file+": has a default route")
		default:
			w.add(Deny, "no-route", f.file+": no default route")
		}
	}
	routeOnly(&w, defaultInternet)
	return w.outcome("default route")
}

// routeOnly adds a route lookup (no packet) for each address.
func routeOnly(w *worst, addrs []string) {
	for _, a := range addrs {
		ap, err := netip.ParseAddrPort(a)
		if err != nil {
			w.add(Unknown, "bad-target", a+": "+err.Error())
			continue
		}
		d, o := decideRoute(routeLookup(ap))
		w.add(d, o, "route lookup "+a+" (nothing sent): "+o)
	}
}

// reachTargets decides configured outside targets: the route lookup first;
// where there is a route, a real TCP connect.
func reachTargets(e *Env, w *worst, addrs []string) {
	for _, a := range addrs {
		ap, err := netip.ParseAddrPort(a)
		if err != nil {
			w.add(Unknown, "bad-target", a+": "+err.Error())
			continue
		}
		if d, o := decideRoute(routeLookup(ap)); d != Allow {
			w.add(d, o, "route lookup "+a+": "+o)
			continue
		}
		c, err := dialer(e.Config.timeout()).DialContext(context.Background(), "tcp", a)
		if err == nil {
			c.Close()
		}
		d, o := decideConnect(err)
		w.add(d, o, "connect "+a+": "+o)
	}
}

// outsideProbe checks configured targets for real, or defaults by route only.
func outsideProbe(e *Env, configured, defaults []string, target string) outcome {
	var w worst
	if len(configured) > 0 {
		reachTargets(e, &w, configured)
		return w.outcome(strings.Join(configured, ","))
	}
	routeOnly(&w, defaults)
	return w.outcome(target)
}

func probeInternet(e *Env) outcome {
	o := outsideProbe(e, e.Config.Targets.Internet, defaultInternet, "outside (route lookup)")
	if len(e.Config.Targets.Fence) > 0 {
		o = probeFence(e)
	}
	t := e.Config.Targets
	if t.Gateway == "" || t.GatewayRefuse == "" || o.decision != Deny {
		return o
	}
	// The gateway is the one exit: it must refuse a host no allowlist names.
	status, err := gatewayRequest(t.Gateway, "CONNECT "+t.GatewayRefuse+" HTTP/1.1\r\nHost: "+t.GatewayRefuse+"\r\n\r\n", e.Config.timeout())
	d, obs := decideGatewayRefusal(status, err)
	detail := o.detail + "; gateway CONNECT " + t.GatewayRefuse + ": " + obs
	if d != Deny {
		return outcome{target: o.target + " + gateway " + t.GatewayRefuse, decision: d, observed: obs, detail: detail}
	}
	return outcome{target: o.target + " + gateway " + t.GatewayRefuse, decision: Deny, observed: o.observed + "+gateway-refused", detail: detail}
}

// decideGatewayRefusal: 403 is the gateway's refusal (DENY); a 2xx would
// be a tunnel (ALLOW); anything else cannot be judged (UNKNOWN).
func decideGatewayRefusal(status int, err error) (Decision, string) {
	switch {
	case err != nil:
		return Unknown, "gateway-unanswered"
	case status == 403:
		return Deny, "gateway-refused"
	case status >= 200 && status < 300:
		return Allow, "gateway-tunnelled"
	}
	return Unknown, "gateway-status-" + strconv.Itoa(status)
}

// gatewayRequest sends one raw HTTP/1.1 request to the gateway and returns
// the response's status code (raw, so that init needs no HTTP client).
func gatewayRequest(addr, req string, timeout time.Duration) (int, error) {
	c, err := dialer(timeout).Dial("tcp", addr)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	if _, err := io.WriteString(c, req); err != nil {
		return 0, err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return 0, err
	}
	f := strings.Fields(line)
	if len(f) < 2 || !strings.HasPrefix(f[0], "HTTP/1.") {
		return 0, fmt.Errorf("not an HTTP response: %q", line)
	}
	return strconv.Atoi(f[1])
}

func probeMetadata(e *Env) outcome {
	return outsideProbe(e, e.Config.Targets.Metadata, defaultMetadata, "metadata (route lookup)")
}

func probeHostLoopback(e *Env) outcome {
	c := e.Config.Targets.HostLoopback
	if c == nil {
		return outcome{
			target: "host 127.0.0.1", decision: Unknown, observed: "no-canary",
			detail: "the launcher gave no loopback canary (InitConfig.targets.host_loopback)",
		}
	}
	d, o := dialCanary(context.Background(), "tcp", c.Addr, c.TokenSHA256, e.Config.timeout())
	return outcome{target: c.Addr, decision: d, observed: o, detail: "connect " + c.Addr + ": " + o}
}

func probeHostAbstract(e *Env) outcome {
	c := e.Config.Targets.HostAbstract
	if c == nil {
		return outcome{
			target: "host abstract socket", decision: Unknown, observed: "no-canary",
			detail: "the launcher gave no abstract socket canary (InitConfig.targets.host_abstract)",
		}
	}
	name := "@" + strings.TrimPrefix(c.Addr, "@")
	d, o := dialCanary(context.Background(), "unix", name, c.TokenSHA256, e.Config.timeout())
	return outcome{target: name, decision: d, observed: o, detail: "connect " + name + ": " + o}
}

// probeGateway is the positive control: the configured gateway, or else a
// listener on 127.0.0.1 that the probe runs itself.
func probeGateway(e *Env) outcome {
	if gw, health := e.Config.Targets.Gateway, e.Config.Targets.GatewayHealth; gw != "" && health != "" {
		status, err := gatewayRequest(gw, "GET "+health+" HTTP/1.1\r\nHost: "+gw+"\r\nConnection: close\r\n\r\n", e.Config.timeout())
		switch {
		case err != nil:
			d, o := decideConnect(err)
			if d == Allow {
				d = Unknown
			}
			return outcome{target: gw + health, decision: d, observed: o, detail: "GET " + gw + health + ": " + err.Error()}
		case status != 200:
			return outcome{target: gw + health, decision: Unknown, observed: "status-" + strconv.Itoa(status), detail: "the gateway's health route answered " + strconv.Itoa(status)}
		}
		return outcome{target: gw + health, decision: Allow, observed: "health-ok", detail: "GET " + gw + health + ": 200 through the bridge to the gateway"}
	}
	if gw := e.Config.Targets.Gateway; gw != "" {
		c, err := dialer(e.Config.timeout()).Dial("tcp", gw)
		if err == nil {
			c.Close()
			return outcome{target: gw, decision: Allow, observed: "connected", detail: "connect " + gw + ": connected"}
		}
		d, o := decideConnect(err)
		if d == Allow {
			d = Deny
		}
		return outcome{target: gw, decision: d, observed: o, detail: "connect " + gw + ": " + o}
	}
	return loopbackControl(e)
}

func loopbackControl(e *Env) outcome {
	const target = "127.0.0.1 (loopback control)"
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		d, o := decideSyscall(err)
		if d == Allow {
			d = Unknown
		}
		return outcome{target: target, decision: d, observed: "listen-" + o, detail: "listen on 127.0.0.1: " + err.Error()}
	}
	defer l.Close()
	go func() {
		if c, err := l.Accept(); err == nil {
			_, _ = c.Write([]byte("agentbox-probe"))
			c.Close()
		}
	}()
	c, err := dialer(e.Config.timeout()).Dial("tcp4", l.Addr().String())
	if err != nil {
		d, o := decideConnect(err)
		if d == Allow {
			d = Unknown
		}
		return outcome{target: target, decision: d, observed: o, detail: "connect to own listener: " + err.Error()}
	}
	defer c.Close()
	if string(readToken(c, e.Config.timeout())) != "agentbox-probe" {
		return outcome{target: target, decision: Unknown, observed: "no-echo", detail: "connected, but the listener's bytes did not arrive"}
	}
	return outcome{target: target, decision: Allow, observed: "loopback-works", detail: "listen, connect and read on 127.0.0.1 work"}
}
