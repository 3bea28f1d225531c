package policy

import (
	"path/filepath"
	"strings"
)

// FileName is the policy file agentbox looks for in the workspace.
const FileName = "agentbox.yaml"

// Policy is what a user asks of a sandbox. Both agentbox.yaml and the
// command-line flags fill it; each field's comment says what its zero value
// means. It is serialisable so that a child process can receive it whole.
type Policy struct {
	// Workspace is the project directory, bound read-write at the same path
	// and used as the working directory. Empty means the current directory.
	// A relative path is relative to the policy file's directory.
	Workspace string `yaml:"workspace,omitempty" json:"workspace,omitempty"`

	// Binds are extra host paths made visible in the sandbox. Empty means
	// none. Each one is a decision the audit reports.
	Binds Binds `yaml:"binds,omitempty" json:"binds,omitempty"`

	// Env says which of the launcher's environment variables cross into the
	// sandbox.
	Env Env `yaml:"env,omitempty" json:"env,omitempty"`

	// Limits are the cgroup limits. Zero fields take the defaults.
	Limits Limits `yaml:"limits,omitempty" json:"limits,omitempty"`

	// Runtime names the OCI runtime: runc, crun, runsc, or an absolute path
	// to a runtime binary. Empty lets agentbox choose from the host's facts
	// (ChooseRuntime: crun where it is installed and has not failed its last
	// self-test here, else runc); the run records which and why.
	Runtime string `yaml:"runtime,omitempty" json:"runtime,omitempty"`

	// Engine is what runs the sandbox: "" or EngineRuntime (the OCI
	// runtime's command line, the default) or EngineContainerd (a task of a
	// containerd daemon, docs/containerd.md). From a workspace file it is
	// used only when the file is trusted by digest, as every key is.
	Engine string `yaml:"engine,omitempty" json:"engine,omitempty"`
	// Address is the containerd daemon's socket for EngineContainerd;
	// empty means containerd's own (/run/containerd/containerd.sock). It
	// must be an absolute path, and the launcher refuses a socket that
	// someone other than root or the invoking user could have put there.
	Address string `yaml:"address,omitempty" json:"address,omitempty"`

	// Isolation is how the agent is kept apart from the host: "" (the
	// default) is a sandbox of namespaces run by an OCI runtime; IsolationUser
	// ("user") runs the agent as the dedicated account agentbox-agent, with
	// no namespaces, fenced by file permissions, Landlock, seccomp and an
	// nftables rule keyed on its uid (docs/dedicated-user.md).
	Isolation string `yaml:"isolation,omitempty" json:"isolation,omitempty"`

	// Rootfs is an unpacked image root to use instead of the default root
	// built from read-only binds of the host's system directories. Empty
	// means the default.
	Rootfs string `yaml:"rootfs,omitempty" json:"rootfs,omitempty"`

	// Accept lists audit findings the user tolerates, each with a written
	// reason. Empty means every finding refuses the launch.
	Accept []Acceptance `yaml:"accept,omitempty" json:"accept,omitempty"`

	// Network says what the sandbox may reach. It has no route at all; the
	// gateway on its loopback is its one exit.
	Network Network `yaml:"network,omitempty" json:"network,omitempty"`

	// Gateway configures the gateway's model routes.
	Gateway Gateway `yaml:"gateway,omitempty" json:"gateway,omitempty"`

	// Protect are paths relative to the workspace that are bound read-only
	// over themselves inside the sandbox where they exist (never created
	// for it). Nil means workspace.DefaultProtect (agentbox.yaml, .agentbox,
	// .git/config, .git/hooks, .git/info); an explicit list replaces it, and
	// an empty one protects nothing. See docs/workspace.md.
	Protect []string `yaml:"protect" json:"protect"`
}

// Network is what the gateway lets out and what the agent may use inside.
type Network struct {
	// Allow are the host:port destinations the gateway's HTTP proxy may
	// reach ("*.example.com:443" for every name under a domain). Empty
	// means none: the model routes are the only way out.
	Allow []string `yaml:"allow,omitempty" json:"allow,omitempty"`
	// LocalTCP lets the agent bind and connect to any TCP port of the
	// sandbox's own loopback (a test suite's local server, say). False
	// limits the agent's TCP to the gateway's port, where Landlock can
	// (ABI 4 and later).
	LocalTCP bool `yaml:"local_tcp,omitempty" json:"local_tcp,omitempty"`
}

// Gateway is the gateway's configuration from the policy.
type Gateway struct {
	// Upstreams are model routes by name: "openai", "anthropic" and
	// "google" exist by default (an entry changes only the fields it
	// sets); any other name is an OpenAI-compatible server of yours. Empty
	// means the three defaults with their keys from OPENAI_API_KEY,
	// ANTHROPIC_API_KEY and GEMINI_API_KEY.
	Upstreams map[string]Upstream `yaml:"upstreams,omitempty" json:"upstreams,omitempty"`
}

// Upstream is one model route. The real key stays on the host: the gateway
// reads it and the sandbox only ever holds a per-run token.
type Upstream struct {
	// URL is the upstream's base URL; empty keeps the built-in one. A URL
	// you name may be on loopback or a private address.
	URL string `yaml:"url,omitempty" json:"url,omitempty"`
	// KeyEnv names the launcher's variable holding the real key.
	KeyEnv string `yaml:"key_env,omitempty" json:"key_env,omitempty"`
	// KeyFile names a file holding the real key; it wins over KeyEnv.
	KeyFile string `yaml:"key_file,omitempty" json:"key_file,omitempty"`
	// Auth is "bearer" or "x-api-key"; empty means the upstream's usual.
	Auth string `yaml:"auth,omitempty" json:"auth,omitempty"`
	// Models, when set, are the only model names requests may ask for.
	Models []string `yaml:"models,omitempty" json:"models,omitempty"`
	// CAFile is a PEM bundle of CAs trusted for this upstream.
	CAFile string `yaml:"ca_file,omitempty" json:"ca_file,omitempty"`
}

// Binds are extra bind mounts of host paths, at the same path inside.
type Binds struct {
	// ReadOnly paths are bound read-only. Empty means none.
	ReadOnly []string `yaml:"read_only,omitempty" json:"read_only,omitempty"`
	// ReadWrite paths are bound read-write; the audit reports each one as
	// extra-writable-mount. Empty means none.
	ReadWrite []string `yaml:"read_write,omitempty" json:"read_write,omitempty"`
}

// Env is the environment allowlist.
type Env struct {
	// Allow names the variables passed through from the launcher. A name
	// ending in "*" is a prefix pattern (LC_*). Nil means DefaultEnvAllow;
	// an explicit empty list passes nothing.
	Allow []string `yaml:"allow" json:"allow"`
}

// DefaultEnvAllow is the allowlist used when the policy names none.
var DefaultEnvAllow = []string{"TERM", "LANG", "LC_*", "TZ", "COLORTERM"}

// Limits are resource limits applied through cgroups.
type Limits struct {
	// Memory is the memory limit, as bytes or with a unit (512MiB, 4GiB,
	// 2G). Empty means DefaultMemory.
	Memory string `yaml:"memory,omitempty" json:"memory,omitempty"`
	// Pids is the maximum number of processes. Zero means DefaultPids.
	Pids int64 `yaml:"pids,omitempty" json:"pids,omitempty"`
	// CPUWeight is the relative CPU weight, 1 to 10000 as in cgroup v2's
	// cpu.weight (100 is the host default). Zero means DefaultCPUWeight.
	CPUWeight uint64 `yaml:"cpu_weight,omitempty" json:"cpu_weight,omitempty"`
}

// Defaults for Limits.
const (
	DefaultMemory    = "4GiB"
	DefaultPids      = 512
	DefaultCPUWeight = 100
)

// Acceptance tolerates one audit finding code, optionally for one subject
// only, for a written reason that the ledger records.
type Acceptance struct {
	// Code is the finding code, for example extra-writable-mount.
	Code string `yaml:"code" json:"code"`
	// Subject narrows the acceptance to the findings about this subject:
	// the same subject, or, for an absolute path, that path or anything
	// beneath it (a finding's "SRC -> DST" subject is matched by SRC).
	// Never a substring: /srv/cache does not cover /home/ana/srv/cache-keys.
	// Empty means every finding with Code.
	Subject string `yaml:"subject,omitempty" json:"subject,omitempty"`
	// Reason is why the finding is acceptable. It must not be empty.
	Reason string `yaml:"reason" json:"reason"`
}

// Covers reports whether a tolerates a finding with this code and subject
// (see Subject). It is the one acceptance rule: the planner's path
// refusals, the self-audit, `agentbox audit` and compose --check all ask it.
func (a Acceptance) Covers(code, subject string) bool {
	if a.Code != code {
		return false
	}
	if a.Subject == "" || a.Subject == subject {
		return true
	}
	want := filepath.Clean(a.Subject)
	if !filepath.IsAbs(want) {
		return false
	}
	src, _, _ := strings.Cut(subject, " -> ")
	src = strings.TrimSpace(src)
	return src == want || strings.HasPrefix(src, strings.TrimSuffix(want, "/")+"/")
}

// Accepting returns the first acceptance among as that covers the finding.
func Accepting(as []Acceptance, code, subject string) (Acceptance, bool) {
	for _, a := range as {
		if a.Covers(code, subject) {
			return a, true
		}
	}
	return Acceptance{}, false
}

// Merge returns p with the fields set in o applied on top: scalars in o
// replace those of p, lists in o are appended. Flags are merged this way
// over the file; an allowlist added by flags extends the file's list, or the
// default list when the file names none.
func (p Policy) Merge(o Policy) Policy {
	if o.Workspace != "" {
		p.Workspace = o.Workspace
	}
	p.Binds.ReadOnly = append(append([]string(nil), p.Binds.ReadOnly...), o.Binds.ReadOnly...)
	p.Binds.ReadWrite = append(append([]string(nil), p.Binds.ReadWrite...), o.Binds.ReadWrite...)
	if o.Env.Allow != nil {
		base := p.Env.Allow
		if base == nil {
			base = DefaultEnvAllow
		}
		p.Env.Allow = append(append([]string{}, base...), o.Env.Allow...)
	}
	if o.Limits.Memory != "" {
		p.Limits.Memory = o.Limits.Memory
	}
	if o.Limits.Pids != 0 {
		p.Limits.Pids = o.Limits.Pids
	}
	if o.Limits.CPUWeight != 0 {
		p.Limits.CPUWeight = o.Limits.CPUWeight
	}
	if o.Runtime != "" {
		p.Runtime = o.Runtime
	}
	if o.Rootfs != "" {
		p.Rootfs = o.Rootfs
	}
	if o.Engine != "" {
		if o.Engine != EngineContainerd && o.Address == "" {
			p.Address = "" // the containerd daemon's, an engine o turns away from
		}
		p.Engine = o.Engine
	}
	if o.Address != "" {
		p.Address = o.Address
	}
	if o.Isolation != "" {
		p.Isolation = o.Isolation
	}
	p.Accept = append(append([]Acceptance(nil), p.Accept...), o.Accept...)
	p.Network.Allow = append(append([]string(nil), p.Network.Allow...), o.Network.Allow...)
	p.Network.LocalTCP = p.Network.LocalTCP || o.Network.LocalTCP
	p.Gateway.Upstreams = mergeUpstreams(p.Gateway.Upstreams, o.Gateway.Upstreams)
	if o.Protect != nil {
		p.Protect = append([]string{}, o.Protect...)
	}
	return p
}

// mergeUpstreams lays o's set fields over p's, per route.
func mergeUpstreams(p, o map[string]Upstream) map[string]Upstream {
	if len(o) == 0 {
		return p
	}
	out := map[string]Upstream{}
	for k, v := range p {
		out[k] = v
	}
	for k, v := range o {
		u := out[k]
		if v.URL != "" {
			u.URL = v.URL
		}
		if v.KeyEnv != "" {
			u.KeyEnv = v.KeyEnv
		}
		if v.KeyFile != "" {
			u.KeyFile = v.KeyFile
		}
		if v.Auth != "" {
			u.Auth = v.Auth
		}
		if v.Models != nil {
			u.Models = append([]string(nil), v.Models...)
		}
		if v.CAFile != "" {
			u.CAFile = v.CAFile
		}
		out[k] = u
	}
	return out
}
