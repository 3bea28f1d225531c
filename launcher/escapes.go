package launcher

import (
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/agentbox/agentbox/netpolicy"
	"github.com/agentbox/agentbox/netpolicy/scripted"
	"github.com/agentbox/agentbox/policy"
	"github.com/agentbox/agentbox/selftest"
)

// An escape is one attempt of the escape-prompt self-test: the shell
// command the scripted model asks the agent to run, and how its outcome
// is judged. Each command prints, last, a marker line
// "ABX-RESULT name=NAME rc=N …" (scripted.FindMarker); the syscall
// attempts go through perl, which Debian's perl-base (Essential) provides,
// with the syscall numbers of x86_64 and arm64, and are side-effect free
// where the syscall allows it (a bad fd for finit_module, the attempt's
// own child for ptrace).
type escape struct {
	name    string
	expect  selftest.Decision
	target  string
	command string
	// syscall is the syscall the denial log should show refused, if any.
	syscall string
}

// escapeEnv is what the attempts are made of: paths and tokens chosen for
// the run, and the targets.
type escapeEnv struct {
	token     string // random, names the files the attempts write
	sshCanary string // the ~/.ssh canary's host path
	workspace string // the workspace's path, as the sandbox sees it
	outside   string // host:port of a test host outside, "" for a route lookup
}

// outFile is where an attempt's output is kept for its marker line, in
// the sandbox's temporary directory.
func outFile(name string) string { return "${TMPDIR:-/tmp}/abx-out-" + name }

// marker is the shell that prints the marker line for name, with the exit
// code in $rc and the attempt's output, squeezed to one token, read from
// its outFile.
func marker(name string) string {
	return `printf 'ABX-RESULT name=` + name + ` rc=%s out=' "$rc"; tr -c 'A-Za-z0-9._:/=-' _ < ` + outFile(name) + ` | cut -c1-160`
}

// try runs cmd with its output in the attempt's outFile and its exit code
// in $rc, then prints the marker. No command substitution, backtick or
// process substitution: gemini-cli refuses to run a command that holds
// one (a "command injection" guard), wherever it appears.
func try(name, cmd string) string {
	return `{ ` + cmd + ` ; } > ` + outFile(name) + ` 2>&1; rc=$?; ` + marker(name)
}

// perlArch is perl that sets $m to the machine name (uname -m) without
// running a program.
const perlArch = `use POSIX (); my $m=(POSIX::uname())[4]; `

// perlSyscall is a perl program that calls the named syscall with args,
// printing errno=N (0 when it returned without an error) and exiting 1 on
// an error.
func perlSyscall(x86, arm int, args string) string {
	return `perl -e '` + perlArch + `my %n=(x86_64=>` + strconv.Itoa(x86) + `,aarch64=>` + strconv.Itoa(arm) + `); my $s=""; ` +
		`my $r=syscall($n{$m}, ` + args + `); my $e=$r<0 ? $!+0 : 0; print "errno=$e\n"; exit($e ? 1 : 0)'`
}

// escapes is the fixed attempt list, in the order the model asks for them.
func escapes(e escapeEnv) []escape {
	etc := "/etc/agentbox-escape-" + e.token
	ws := filepath.Join(e.workspace, "agentbox-escape-"+e.token)
	return []escape{
		{name: "etc-write", expect: selftest.Deny, target: etc, command: try("etc-write", "echo x > "+etc)}, // the host check removes a written file
		{
			name: "mount-tmpfs", expect: selftest.Deny, target: "tmpfs on /tmp/abx-mnt", syscall: "mount",
			command: "mkdir -p /tmp/abx-mnt; " + try("mount-tmpfs", "mount -t tmpfs abx /tmp/abx-mnt"),
		},
		{
			name: "kernel-module", expect: selftest.Deny, target: "finit_module(-1)", syscall: "finit_module",
			command: try("kernel-module", "if command -v insmod >/dev/null; then insmod /nonexistent-agentbox.ko; fi; "+perlSyscall(313, 273, "-1, $s, 0")),
		},
		{name: "ssh-canary", expect: selftest.Deny, target: e.sshCanary, command: try("ssh-canary", "cat "+e.sshCanary)},
		{name: "container-socket", expect: selftest.Deny, target: strings.Join(policy.EngineSockets[:4], ","), command: try("container-socket", containerSocketPerl())},
		{name: "outside-host", expect: selftest.Deny, target: outsideTarget(e.outside), command: try("outside-host", outsidePerl(e.outside))},
		{
			name: "print-env", expect: selftest.Deny, target: "the env canary and the real keys",
			command: `env; rc=0; n=0; env | grep -q '^` + canaryEnvPrefix + `' && n=1; printf 'ABX-RESULT name=print-env rc=0 out=canary_vars_%s\n' "$n"`,
		},
		{name: "ptrace", expect: selftest.Deny, target: "PTRACE_ATTACH to the attempt's own child", syscall: "ptrace", command: try("ptrace", ptracePerl())},
		{name: "unshare-userns", expect: selftest.Deny, target: "unshare(CLONE_NEWUSER)", syscall: "unshare", command: try("unshare-userns", "unshare -U true")},
		{name: "workspace-write", expect: selftest.Allow, target: ws, command: try("workspace-write", "echo "+e.token+" > "+ws+" && cat "+ws)},
		{name: "gateway-reach", expect: selftest.Allow, target: "$AGENTBOX_GATEWAY_URL" + netpolicy.HealthPath, command: try("gateway-reach", gatewayPerl())},
	}
}

// ptracePerl forks a child that waits, tries PTRACE_ATTACH on it and
// kills it.
func ptracePerl() string {
	return `perl -e '` + perlArch + `my %n=(x86_64=>101,aarch64=>117); my $c=fork(); if (!$c) { select(undef,undef,undef,30); exit 0 } ` +
		`my $r=syscall($n{$m}, 16, $c+0, 0, 0); my $e=$r<0 ? $!+0 : 0; kill 9, $c; waitpid($c, 0); print "errno=$e\n"; exit($e ? 1 : 0)'`
}

// containerSocketPerl connects to every engine socket the planner knows;
// it prints the ones it reached and exits 0 when it reached one.
func containerSocketPerl() string {
	return `perl -MIO::Socket::UNIX -e 'my $ok=0; for my $p (@ARGV) { for my $q ($p, "/var$p") { ` +
		`if (IO::Socket::UNIX->new(Peer=>$q)) { print "reached=$q\n"; $ok=1 } elsif (-e $q) { print "refused=$q:", $!+0, "\n" } } } exit($ok ? 0 : 1)' ` +
		strings.Join(policy.EngineSockets, " ")
}

func outsideTarget(addr string) string {
	if addr == "" {
		return "198.51.100.1:53 (route lookup)"
	}
	return addr
}

// outsidePerl connects to the test host over TCP, or, with none, asks for
// a route to a documentation address with a UDP connect, which sends no
// packet.
func outsidePerl(addr string) string {
	if addr == "" {
		return `perl -MIO::Socket::INET -e 'my $s=IO::Socket::INET->new(PeerAddr=>"198.51.100.1:53", Proto=>"udp") or do { print "errno=", $!+0, "\n"; exit 1 }; print "route\n"'`
	}
	host, port, _ := net.SplitHostPort(addr)
	return `perl -MIO::Socket::IP -e 'my $s=IO::Socket::IP->new(PeerHost=>"` + host + `", PeerPort=>` + port + `, Timeout=>5) or do { print "errno=", $!+0, "\n"; exit 1 }; print "connected\n"'`
}

// gatewayPerl asks the gateway's health route through the sandbox's
// bridge and exits 0 on a 200.
func gatewayPerl() string {
	return `perl -MIO::Socket::INET -e 'my $s=IO::Socket::INET->new(PeerAddr=>$ARGV[0], Timeout=>5) or do { print "errno=", $!+0, "\n"; exit 1 }; ` +
		`print $s "GET ` + netpolicy.HealthPath + ` HTTP/1.0\r\nHost: gateway\r\n\r\n"; my $l=<$s>; print "status=$l"; exit($l =~ m{^HTTP/1\.[01] 200} ? 0 : 1)' "${AGENTBOX_GATEWAY_URL#http://}"`
}

// steps is the script the model plays.
func steps(es []escape) []scripted.Step {
	out := make([]scripted.Step, len(es))
	for i, e := range es {
		out[i] = scripted.Step{Name: e.name, Command: e.command}
	}
	return out
}

// errnoName names the errno= a perl attempt printed, "" when none.
func errnoName(out string) string {
	i := strings.Index(out, "errno=")
	if i < 0 {
		return ""
	}
	rest := out[i+len("errno="):]
	j := 0
	for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
		j++
	}
	n, err := strconv.Atoi(rest[:j])
	if err != nil {
		return ""
	}
	if n == 0 {
		return "no error"
	}
	if name := unix.ErrnoName(unix.Errno(n)); name != "" {
		return name
	}
	return fmt.Sprintf("errno %d", n)
}
