package policy

import (
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/agentbox/agentbox/workspace"
)

// Validate checks the values of a policy that YAML types cannot: units,
// ranges, names and reasons. src locates the offending line; use Source{}
// for a policy built from flags.
func Validate(p Policy, src Source) error {
	checks := []func(Policy, Source) error{
		validateLimits, validateRuntime, validateEngine, validateIsolation, validateEnv, validateAccept, validatePaths, validateNetwork, validateProtect,
	}
	for _, check := range checks {
		if err := check(p, src); err != nil {
			return err
		}
	}
	return nil
}

func validateLimits(p Policy, src Source) error {
	if p.Limits.Memory != "" {
		if _, err := ParseBytes(p.Limits.Memory); err != nil {
			return src.errorf("limits.memory", "write a size such as 512MiB, 4GiB or 2G", "%v", err)
		}
	}
	if p.Limits.Pids < 0 {
		return src.errorf("limits.pids", "use a positive number such as 512", "negative process limit %d", p.Limits.Pids)
	}
	if w := p.Limits.CPUWeight; w > 10000 {
		return src.errorf("limits.cpu_weight", "cpu.weight ranges from 1 to 10000; 100 is the default", "cpu weight %d out of range", w)
	}
	return nil
}

var knownRuntimes = []string{"runc", "crun", "runsc"}

func validateRuntime(p Policy, src Source) error {
	r := p.Runtime
	if r == "" || filepath.IsAbs(r) {
		return nil
	}
	for _, k := range knownRuntimes {
		if r == k {
			return nil
		}
	}
	return src.errorf("runtime", "use runc, crun, runsc or an absolute path to an OCI runtime binary", "unknown runtime %q", r)
}

// The engines (Policy.Engine).
const (
	EngineRuntime    = "runtime"
	EngineContainerd = "containerd"
)

func validateEngine(p Policy, src Source) error {
	switch p.Engine {
	case "", EngineRuntime, EngineContainerd:
	default:
		return src.errorf("engine", "use runtime (the OCI runtime's command line, the default) or containerd", "unknown engine %q", p.Engine)
	}
	if p.Address == "" {
		return nil
	}
	if p.Engine != EngineContainerd {
		return src.errorf("address", "set engine: containerd (or --engine containerd) beside it, in the same file or on the same command line", "address %q is a containerd daemon's socket, and this policy does not choose the containerd engine", p.Address)
	}
	if !filepath.IsAbs(p.Address) {
		return src.errorf("address", "give the socket's absolute path, for example /run/containerd/containerd.sock", "address %q is not an absolute path", p.Address)
	}
	return nil
}

var envName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*\*?$`) })

func validateEnv(p Policy, src Source) error {
	for i, n := range p.Env.Allow {
		if !envName().MatchString(n) {
			return src.errorf(fmt.Sprintf("env.allow[%d]", i), "name a variable such as LANG, or a prefix pattern such as LC_*", "%q is not a variable name", n)
		}
	}
	return nil
}

var findingCode = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`) })

func validateAccept(p Policy, src Source) error {
	for i, a := range p.Accept {
		field := fmt.Sprintf("accept[%d]", i)
		if !findingCode().MatchString(a.Code) {
			return src.errorf(field+".code", "use a finding code such as extra-writable-mount (agentbox audit lists them)", "%q is not a finding code", a.Code)
		}
		if strings.TrimSpace(a.Reason) == "" {
			return src.errorf(field+".reason", "say in words why "+a.Code+" is acceptable; the reason is recorded in the ledger", "missing reason")
		}
	}
	return nil
}

func validatePaths(p Policy, src Source) error {
	lists := map[string][]string{"binds.read_only": p.Binds.ReadOnly, "binds.read_write": p.Binds.ReadWrite}
	for _, name := range sortedKeys(lists) {
		for i, b := range lists[name] {
			if strings.TrimSpace(b) == "" {
				return src.errorf(fmt.Sprintf("%s[%d]", name, i), "remove the entry or name a path", "empty path")
			}
		}
	}
	return nil
}

// ParseBytes parses a size: a plain number of bytes, or a number with one of
// the units K, M, G, T (powers of 1000, with an optional B) or KiB, MiB, GiB,
// TiB (powers of 1024).
func ParseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := strings.IndexFunc(t, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	num, unit := t, ""
	if i >= 0 {
		num, unit = t[:i], strings.TrimSpace(t[i:])
	}
	mult, ok := byteUnits[strings.ToLower(unit)]
	if !ok || num == "" {
		return 0, fmt.Errorf("size %q: unknown unit %q", s, unit)
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("size %q is not a positive number", s)
	}
	return int64(v * float64(mult)), nil
}

var byteUnits = map[string]int64{
	"": 1, "b": 1,
	"k": 1e3, "kb": 1e3, "m": 1e6, "mb": 1e6, "g": 1e9, "gb": 1e9, "t": 1e12, "tb": 1e12,
	"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
}

var upstreamName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)

func validateNetwork(p Policy, src Source) error {
	for i, a := range p.Network.Allow {
		host, port, err := net.SplitHostPort(a)
		if n, perr := strconv.Atoi(port); err != nil || host == "" || perr != nil || n < 1 || n > 65535 {
			return src.errorf(fmt.Sprintf("network.allow[%d]", i), "write host:port, for example api.github.com:443 or *.pypi.org:443", "%q is not host:port", a)
		}
	}
	for _, name := range sortedKeys(p.Gateway.Upstreams) {
		u := p.Gateway.Upstreams[name]
		field := "gateway.upstreams." + name
		if !upstreamName.MatchString(name) {
			return src.errorf(field, "use a lowercase name such as local or vllm; it becomes the route /NAME/…", "%q is not a route name", name)
		}
		if name != "openai" && name != "anthropic" && name != "google" && u.URL == "" {
			return src.errorf(field+".url", "give the server's base URL, for example http://127.0.0.1:11434/v1", "a route of your own needs a url")
		}
		if u.URL != "" {
			if pu, err := url.Parse(u.URL); err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
				return src.errorf(field+".url", "write an http:// or https:// URL", "%q is not an http(s) URL", u.URL)
			}
		}
		if u.Auth != "" && u.Auth != "bearer" && u.Auth != "x-api-key" && u.Auth != "x-goog-api-key" {
			return src.errorf(field+".auth", "use bearer, x-api-key or x-goog-api-key", "unknown auth %q", u.Auth)
		}
	}
	return nil
}

func validateProtect(p Policy, src Source) error {
	for i, e := range p.Protect {
		if err := workspace.CheckProtectPath(e); err != nil {
			return src.errorf(fmt.Sprintf("protect[%d]", i), "name a path relative to the workspace, such as .git/config", "%v", err)
		}
	}
	return nil
}
