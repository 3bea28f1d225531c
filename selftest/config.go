package selftest

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"time"
)

// ProtocolVersion is the version of InitConfig and of the init protocol. Init
// refuses a configuration with another version. Version 2 added
// Command.User and the pid in "probes-done"; version 3 "agent-ready".
const ProtocolVersion = 3

// InitConfig is everything agentbox-init needs, sent by the launcher as the
// first line on the init fd. It is also the input of Run and of
// `agentbox-init --probe NAME --json` (read from stdin there).
type InitConfig struct {
	// Version must equal ProtocolVersion.
	Version int `json:"version"`
	// RunID is copied into every Result; empty is allowed for ad-hoc runs.
	RunID string `json:"run_id"`
	// Agent is the command init starts after the probes. Its Env is also the
	// environment the probes run with. A zero Agent is valid only for probe
	// runs that start no agent.
	Agent Command `json:"agent"`
	// Probes names the probes to run, in catalog order. Nil runs every probe
	// of Catalog(); an empty non-nil list runs none. Unknown names are errors.
	Probes []string `json:"probes"`
	// Targets says where the network probes aim. Zero values mean route
	// lookups only, which send no packet (see Targets).
	Targets Targets `json:"targets"`
	// Canaries describes what the launcher planted outside the boundary.
	// Zero values make the probes that need them report UNKNOWN.
	Canaries Canaries `json:"canaries"`
	// AllowEnv lists variable names that environment-is-clean accepts although
	// they look like credentials (the gateway token). Nil accepts none.
	AllowEnv []string `json:"allow_env,omitempty"`
	// Kernel is the kernel the sandbox should find, with the host's facts
	// to compare with (gvisor.go).
	Kernel KernelPlan `json:"kernel"`
	// AllowDevices lists device paths under /dev accepted beyond the default
	// set (null, zero, full, random, urandom, tty, console, ptmx, pts/*).
	AllowDevices []string `json:"allow_devices,omitempty"`
	// PtracePID is the process the ptrace, process_vm_readv, prlimit and
	// kill probes aim at. Zero means 1, the sandbox's init; tests aim at a
	// process they started.
	PtracePID int `json:"ptrace_pid,omitempty"`
	// TimeoutMS bounds each network attempt. Zero means 500 ms.
	TimeoutMS int `json:"timeout_ms,omitempty"`
	// Landlock is applied, before the agent is executed, by init's child
	// that becomes the agent, to itself; the agent and its children inherit
	// it, init stays outside. Nil applies none.
	Landlock *LandlockPlan `json:"landlock,omitempty"`
	// Bridge, when set, makes init relay 127.0.0.1:Port and [::1]:Port to
	// the gateway's socket (bind-mounted into the sandbox) before the
	// probes, for the probes and then the agent.
	Bridge *Bridge `json:"bridge,omitempty"`
	// WaitGo makes init wait, after sending the results, for the launcher's
	// "go" or "abort". False starts the agent right after the probes.
	WaitGo bool `json:"wait_go"`
}

// Command is a process to start: argv, environment and working directory.
type Command struct {
	// Args is argv; Args[0] is looked up in PATH of Env when it has no slash.
	Args []string `json:"args"`
	// Env is the complete environment ("NAME=value"); nil means empty.
	Env []string `json:"env"`
	// Dir is the working directory; empty means /.
	Dir string `json:"dir,omitempty"`
	// User, when set, is who init's children become before they execute
	// anything, the probes as much as the agent: init, running as another
	// uid (0 of the user namespace) with CAP_SETUID, CAP_SETGID and
	// CAP_SETPCAP, empties the child's bounding set and switches it to
	// these ids, which clears every other capability set, and refuses to go
	// on when any capability is left. Nil leaves the children init's own
	// ids (a sandbox with one id, where init runs as the agent).
	User *Credential `json:"user,omitempty"`
	// Seccomp is a seccomp filter (struct sock_filter array, native byte
	// order) that init's children load once they are User, with
	// no_new_privs, before they report ready: the probes and the agent run
	// under it. Set where no runtime installs the plan's filter
	// (--isolation user, where init runs on the host as root); nil loads
	// none.
	Seccomp []byte `json:"seccomp,omitempty"`
	// Protect, when set, are read-only binds that init's child makes, as
	// root, in a mount namespace of its own before it becomes User
	// (--isolation user, where no runtime makes the plan's protected and
	// cover mounts); the probes run there too, in the process that then
	// executes the agent. Nil binds nothing.
	Protect *Protect `json:"protect,omitempty"`
}

// Protect are read-only binds inside a workspace.
type Protect struct {
	// Workspace is the absolute path every Bind's Path is below.
	Workspace string `json:"workspace"`
	// Binds are made in order.
	Binds []ProtectBind `json:"binds"`
}

// ProtectBind is one read-only bind. Path is resolved below the workspace
// without following any symlink; a path gone since the plan is skipped.
type ProtectBind struct {
	// Path is relative to the workspace, with slashes.
	Path string `json:"path"`
	// Source, absolute, is bound over Path (an empty file over a socket);
	// empty binds Path over itself.
	Source string `json:"source,omitempty"`
}

// Credential is a uid and a gid inside the sandbox. The process gets no
// supplementary group.
type Credential struct {
	UID uint32 `json:"uid"`
	GID uint32 `json:"gid"`
}

// Targets are the network probes' destinations. Addresses are "host:port"
// with a literal IP; names are not resolved.
//
// An empty list never makes a probe send a packet: it falls back to route
// lookups (connect(2) on a UDP socket, which sends nothing) towards the
// defaults named on each field. A configured target is connected to for real,
// so tests point every configured target at test hosts in network namespaces
// they made.
type Targets struct {
	// Internet are outside hosts internet-unreachable connects to. Empty means
	// route lookups to 198.51.100.1 and 2001:db8::1 (documentation ranges).
	Internet []string `json:"internet,omitempty"`
	// DNS are resolvers dns-unresolvable queries. Empty means the nameservers
	// of /etc/resolv.conf: route lookups only, except loopback ones, which are
	// queried since loopback traffic cannot leave the network namespace.
	DNS []string `json:"dns,omitempty"`
	// Metadata are cloud metadata endpoints metadata-unreachable connects to.
	// Empty means route lookups to 169.254.169.254 and fd00:ec2::254.
	Metadata []string `json:"metadata,omitempty"`
	// Gateway is the gateway gateway-reachable must reach ("127.0.0.1:PORT",
	// the in-sandbox bridge). Empty means the loopback control: a listener on
	// 127.0.0.1 inside the sandbox.
	Gateway string `json:"gateway,omitempty"`
	// GatewayHealth is the gateway's health route, asked with an HTTP GET;
	// empty means a TCP connect only.
	GatewayHealth string `json:"gateway_health,omitempty"`
	// GatewayRefuse is a host:port that no allowlist names; when set,
	// internet-unreachable also asks the gateway to CONNECT there and must
	// get a refusal. The gateway refuses an unlisted name without resolving
	// it, so no packet leaves.
	GatewayRefuse string `json:"gateway_refuse,omitempty"`
	// Fence are listeners the launcher runs on the host's 127.0.0.1 and ::1,
	// on ports other than the gateway's, where the agent shares the host's
	// network and an nftables fence on its uid is its boundary
	// (--isolation user). internet-unreachable then connects to each of
	// them instead of looking routes up, and passes only when the fence's
	// catch-all, the rule every outside destination meets too, refuses the
	// connect before any packet leaves the host; dns-unresolvable sends
	// its query to them over UDP. Empty: a sandbox of its own network.
	Fence []NetCanary `json:"fence,omitempty"`
	// HostLoopback is the canary the launcher listens on at the host's
	// 127.0.0.1. Nil makes host-loopback-unreachable report UNKNOWN.
	HostLoopback *NetCanary `json:"host_loopback,omitempty"`
	// HostAbstract is the canary abstract unix socket of the host. Nil makes
	// host-abstract-socket-unreachable report UNKNOWN.
	HostAbstract *NetCanary `json:"host_abstract,omitempty"`
	// WorkspaceSocket is a pathname socket the launcher listens on in the
	// workspace, as a host program (nvim --listen, tmux -S) would; Addr is
	// its absolute path. Nil makes workspace-socket-unreachable report
	// UNKNOWN.
	WorkspaceSocket *NetCanary `json:"workspace_socket,omitempty"`
}

// NetCanary is a listener the launcher runs outside the boundary. On accept
// it writes a token and closes; the probe compares the token's digest, so it
// can tell the canary from any listener of the sandbox's own.
type NetCanary struct {
	// Addr is "127.0.0.1:PORT" for TCP, or the abstract socket's name without
	// the leading NUL or @ for unix sockets.
	Addr string `json:"addr"`
	// TokenSHA256 is SHA256(token), "sha256:…".
	TokenSHA256 string `json:"token_sha256"`
}

// Canaries are what the launcher planted outside the boundary.
type Canaries struct {
	// HostHome are the invoking user's real home directories.
	HostHome []HostPath `json:"host_home,omitempty"`
	// HomeInstalls are the inside paths of the read-only binds the plan
	// makes on purpose, the command's closure (~/.nvm/versions/node/v22,
	// ~/.local/bin): host-home-not-mounted accepts a part of a home
	// mounted exactly at one of them and read-only, and nothing else.
	HomeInstalls []string `json:"home_installs,omitempty"`
	// Files are canary files with random content (in the real home, beside
	// the bundle); the sandbox must not see them anywhere.
	Files []HostPath `json:"files,omitempty"`
	// FileSHA256 is the digest of the canary files' content.
	FileSHA256 string `json:"file_sha256,omitempty"`
	// EnvName is a variable set in the launcher's environment only.
	EnvName string `json:"env_name,omitempty"`
	// EnvSHA256 is the digest of that variable's value.
	EnvSHA256 string `json:"env_sha256,omitempty"`
}

// HostPath identifies a host path independently of where a mount may show it:
// the filesystem it lives on (Dev, as mountinfo's "major:minor") and its path
// inside that filesystem (FSPath). IdentifyHostPath fills it on the host.
type HostPath struct {
	Path   string `json:"path"`
	Dev    string `json:"dev"`
	FSPath string `json:"fs_path"`
	Ino    uint64 `json:"ino,omitempty"`
}

// LandlockPlan is the Landlock ruleset init applies before starting the agent.
type LandlockPlan struct {
	// Paths are the only filesystem locations the agent may access.
	Paths []LandlockPath `json:"paths"`
	// RestrictTCP limits TCP connect and bind to ConnectTCP and BindTCP
	// (Landlock ABI 4 and later). False leaves TCP to the network namespace.
	RestrictTCP bool `json:"restrict_tcp,omitempty"`
	// ConnectTCP and BindTCP are the only TCP ports the agent may connect to
	// or bind when RestrictTCP is set; both empty then forbid all TCP.
	ConnectTCP []uint16 `json:"connect_tcp,omitempty"`
	BindTCP    []uint16 `json:"bind_tcp,omitempty"`
	// MinABI is the lowest Landlock ABI init accepts; below it init refuses
	// to start the agent. Zero accepts any ABI, even none (recorded as 0).
	MinABI int `json:"min_abi,omitempty"`
}

// LandlockPath is one path of a LandlockPlan.
type LandlockPath struct {
	Path string `json:"path"`
	// Write grants read-write access; false is read-only (read and execute).
	Write bool `json:"write,omitempty"`
	// IoctlDev allows ioctl on device files below Path (ABI 5), as a TTY needs.
	IoctlDev bool `json:"ioctl_dev,omitempty"`
	// Optional skips the path when it does not exist; otherwise init refuses.
	Optional bool `json:"optional,omitempty"`
}

// timeout returns the bound of one network attempt.
func (c *InitConfig) timeout() time.Duration {
	if c.TimeoutMS > 0 {
		return time.Duration(c.TimeoutMS) * time.Millisecond
	}
	return 500 * time.Millisecond
}

// ptracePID returns the pid the ptrace probes aim at.
func (c *InitConfig) ptracePID() int {
	if c.PtracePID > 0 {
		return c.PtracePID
	}
	return 1
}

// Validate reports the first field of c that init cannot use, by its JSON name.
func (c *InitConfig) Validate() error {
	if c.Version != ProtocolVersion {
		return fmt.Errorf("version: got %d, this agentbox-init speaks %d", c.Version, ProtocolVersion)
	}
	for _, n := range c.Probes {
		if _, ok := Lookup(n); !ok {
			return fmt.Errorf("probes: unknown probe %q", n)
		}
	}
	if err := c.Targets.validate(); err != nil {
		return fmt.Errorf("targets: %w", err)
	}
	return c.Canaries.validate()
}

func (t *Targets) validate() error {
	for field, list := range map[string][]string{"internet": t.Internet, "dns": t.DNS, "metadata": t.Metadata} {
		for _, a := range list {
			if err := checkHostPort(a); err != nil {
				return fmt.Errorf("%s: %w", field, err)
			}
		}
	}
	if t.Gateway != "" {
		if err := checkHostPort(t.Gateway); err != nil {
			return fmt.Errorf("gateway: %w", err)
		}
	}
	if t.HostLoopback != nil {
		if err := checkHostPort(t.HostLoopback.Addr); err != nil {
			return fmt.Errorf("host_loopback: %w", err)
		}
	}
	return nil
}

func (c *Canaries) validate() error {
	for _, d := range []string{c.FileSHA256, c.EnvSHA256} {
		if d != "" && !strings.HasPrefix(d, "sha256:") {
			return errors.New(`canaries: digests must start with "sha256:"`)
		}
	}
	return nil
}

// checkHostPort accepts "IP:port" with a literal IP address.
func checkHostPort(a string) error {
	host, _, err := net.SplitHostPort(a)
	if err != nil {
		return fmt.Errorf("%q: %w", a, err)
	}
	if net.ParseIP(host) == nil {
		return fmt.Errorf("%q: host must be a literal IP address", a)
	}
	return nil
}

// Bridge is where init's in-sandbox end of the gateway listens and relays.
type Bridge struct {
	Port   int    `json:"port"`
	Socket string `json:"socket,omitempty"`
	// Dialer says that init gets each gateway connection from the launcher
	// over fd DialerFD (bridge.Dialer) instead of dialling Socket: under
	// gVisor, whose Sentry refuses every host socket (runsc's default
	// --host-uds=none), the gateway's included.
	Dialer bool `json:"dialer,omitempty"`
}

// DialerFD is the fd of init's bridge dialer when Bridge.Dialer is set.
const DialerFD = 4
