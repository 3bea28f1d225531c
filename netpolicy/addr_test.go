package netpolicy

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
)

// TestParseHostSpellings: every spelling of an address comes out as that
// address, so that the allowlist and the range check see through it.
func TestParseHostSpellings(t *testing.T) {
	tests := []struct {
		host string
		want string // address, or "name:NAME", or "error"
	}{
		{"127.0.0.1", "127.0.0.1"},
		{"2130706433", "127.0.0.1"},
		{"0x7f000001", "127.0.0.1"},
		{"0X7F000001", "127.0.0.1"},
		{"017700000001", "127.0.0.1"},
		{"0177.0.0.1", "127.0.0.1"},
		{"0x7f.0.0.1", "127.0.0.1"},
		{"0x7f.1", "127.0.0.1"},
		{"127.1", "127.0.0.1"},
		{"127.0.1", "127.0.0.1"},
		{"127.0.0.1.", "127.0.0.1"},
		{"0", "0.0.0.0"},
		{"0x", "0.0.0.0"},
		{"169.254.43518", "169.254.169.254"},
		{"0xa9fea9fe", "169.254.169.254"},
		{"10.0xff.0377.1", "10.255.255.1"},
		{"[::1]", "::1"},
		{"::1", "::1"},
		{"[::ffff:127.0.0.1]", "::ffff:127.0.0.1"},
		{"[::ffff:7f00:1]", "::ffff:127.0.0.1"},
		{"[0:0:0:0:0:ffff:7f00:0001]", "::ffff:127.0.0.1"},
		{"[fe80::1%25eth0]", "fe80::1%25eth0"},
		{"fe80::1%eth0", "fe80::1%eth0"},
		{"Example.COM", "name:example.com"},
		{"example.com.", "name:example.com"},
		{"a_b.example", "name:a_b.example"},
		{"1.2.3.4.5", "error"},
		{"256.0.0.1", "error"},
		{"1.2.3.256", "error"},
		{"1.2.65536", "error"},
		{"4294967296", "error"},
		{"08.0.0.1", "error"},
		{"0x7g.1", "error"},
		{"1.0x7g", "name:1.0x7g"},
		{"example.1", "error"},
		{"example.0x10", "error"},
		{"", "error"},
		{".", "error"},
		{"a..b", "error"},
		{"-a.b", "error"},
		{"ex ample.com", "error"},
		{"ex%61mple.com", "error"},
		{"１２７.０.０.１", "error"},
		{"[127.0.0.1]", "error"},
		{"[::1", "error"},
		{strings.Repeat("a", 64) + ".com", "error"},
	}
	for _, tt := range tests {
		name, addr, err := ParseHost(tt.host)
		var got string
		switch {
		case err != nil:
			got = "error"
			if !errors.Is(err, ErrMalformedHost) {
				t.Errorf("ParseHost(%q) error %v is not ErrMalformedHost", tt.host, err)
			}
		case name != "":
			got = "name:" + name
		default:
			got = addr.String()
		}
		if got != tt.want {
			t.Errorf("ParseHost(%q) = %s, want %s", tt.host, got, tt.want)
		}
	}
}

// TestDeniedAddr covers each denied range, the embedded-IPv4 forms and
// addresses that must pass.
func TestDeniedAddr(t *testing.T) {
	tests := []struct {
		addr   string
		denied bool
	}{
		{"0.0.0.0", true},
		{"0.1.2.3", true},
		{"10.1.2.3", true},
		{"100.64.0.1", true},
		{"100.100.100.200", true},
		{"127.0.0.1", true},
		{"127.255.255.254", true},
		{"169.254.169.254", true},
		{"172.16.0.1", true},
		{"172.31.255.255", true},
		{"192.0.0.192", true},
		{"192.168.1.1", true},
		{"198.18.0.1", true},
		{"224.0.0.1", true},
		{"239.255.255.250", true},
		{"240.0.0.1", true},
		{"255.255.255.255", true},
		{"::", true},
		{"::1", true},
		{"::ffff:127.0.0.1", true},
		{"::ffff:10.0.0.1", true},
		{"::ffff:169.254.169.254", true},
		{"::127.0.0.1", true},
		{"::8.8.8.8", true},
		{"64:ff9b::127.0.0.1", true},
		{"64:ff9b::a9fe:a9fe", true},
		{"64:ff9b:1::1", true},
		{"2002:7f00:1::1", true},
		{"2002:a00:1::", true},
		{"2001:0:4136:e378::1", true},
		{"fc00::1", true},
		{"fd00:ec2::254", true},
		{"fe80::1", true},
		{"fe80::1%eth0", true},
		{"fec0::1", true},
		{"ff02::1", true},
		{"100::1", true},
		{"8.8.8.8", false},
		{"1.1.1.1", false},
		{"172.32.0.1", false},
		{"100.128.0.1", false},
		{"192.0.2.1", false},
		{"203.0.113.7", false},
		{"::ffff:8.8.8.8", false},
		{"64:ff9b::8.8.8.8", false},
		{"2002:808:808::1", false},
		{"2001:db8::1", false},
		{"2606:4700::1111", false},
	}
	for _, tt := range tests {
		a := netip.MustParseAddr(tt.addr)
		reason, denied := DeniedAddr(a)
		if denied != tt.denied {
			t.Errorf("DeniedAddr(%s) = %v (%s), want %v", tt.addr, denied, reason, tt.denied)
		}
		if denied && reason == "" {
			t.Errorf("DeniedAddr(%s) denied without a reason", tt.addr)
		}
	}
	if _, denied := DeniedAddr(netip.Addr{}); !denied {
		t.Error("the zero Addr must be denied")
	}
}

func TestAllowlist(t *testing.T) {
	a, err := ParseAllowlist([]string{"Example.com:443", "*.pkg.test:443", "203.0.113.7:80", "[2001:db8::7]:443"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		target string
		want   bool
	}{
		{"example.com:443", true},
		{"EXAMPLE.COM.:443", true},
		{"example.com:80", false},
		{"www.example.com:443", false},
		{"a.pkg.test:443", true},
		{"a.b.pkg.test:443", true},
		{"pkg.test:443", false},
		{"evilpkg.test:443", false},
		{"203.0.113.7:80", true},
		{"3405803783:80", true},
		{"0xcb.0.113.7:80", true},
		{"[2001:db8:0::7]:443", true},
	}
	for _, tt := range tests {
		tg, err := ParseTarget(tt.target)
		if err != nil {
			t.Fatalf("ParseTarget(%q): %v", tt.target, err)
		}
		if got := a.Allows(tg); got != tt.want {
			t.Errorf("Allows(%s) = %v, want %v", tt.target, got, tt.want)
		}
	}
	for _, bad := range []string{
		"example.com", "example.com:0", "example.com:65536", "127.0.0.1:443",
		"0x7f.1:443", "[::ffff:10.0.0.1]:443", "*.203.0.113.7:443", "example.com:+443", "example.com:0443",
	} {
		if _, err := ParseAllowlist([]string{bad}); err == nil {
			t.Errorf("ParseAllowlist(%q) accepted it", bad)
		}
	}
	var zero Allowlist
	if tg, _ := ParseTarget("example.com:443"); zero.Allows(tg) {
		t.Error("the zero Allowlist allowed something")
	}
}
