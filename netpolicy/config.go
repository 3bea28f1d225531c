package netpolicy

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"
)

// Config is everything the gateway needs, filled from agentbox.yaml and flags
// by the launcher, or from a file by `agentbox gateway --config FILE`. Every
// zero value is a safe default; Validate says what is wrong with the rest.
type Config struct {
	// RunID is written on every decision-log line. Empty means "standalone".
	RunID string `yaml:"run_id" json:"run_id,omitempty"`
	// Listen is where a standalone gateway listens: "unix:/path/to.sock" or
	// "tcp:HOST:PORT". The launcher makes its own listener and ignores it.
	Listen string `yaml:"listen" json:"listen,omitempty"`
	// Token is the per-run token agents present. It is never serialised; the
	// launcher sets it from NewToken, a standalone gateway reads it from
	// TokenFile or TokenEnv. An empty token refuses every model request.
	Token string `yaml:"-" json:"-"`
	// TokenFile names a file holding the token (standalone mode).
	TokenFile string `yaml:"token_file" json:"token_file,omitempty"`
	// TokenEnv names an environment variable holding the token (standalone mode).
	TokenEnv string `yaml:"token_env" json:"token_env,omitempty"`
	// Upstreams are the model routes by name: a request to /NAME/REST goes to
	// the upstream's URL + /REST. "openai", "anthropic" and "google" exist even when not
	// listed; an entry for them changes only the fields it sets.
	Upstreams map[string]Upstream `yaml:"upstreams" json:"upstreams,omitempty"`
	// Allow is network.allow: host:port entries the HTTP proxy may reach
	// ("*.example.com:443" for every name under a domain). Empty means the
	// proxy refuses every destination.
	Allow []string `yaml:"allow" json:"allow,omitempty"`
	// LogFile is the decision log (JSON lines), opened for appending. Empty
	// means no file; the counters are kept either way.
	LogFile string `yaml:"log_file" json:"log_file,omitempty"`
	// Limits bound what one client can make the gateway hold.
	Limits Limits `yaml:"limits" json:"limits,omitempty"`
}

// Upstream is one model route.
type Upstream struct {
	// URL is the upstream's base URL. Empty means the built-in URL for
	// "openai", "anthropic" and "google" and is an error for any other name. A URL the
	// user names may point at loopback or a private address (a local model
	// server); the built-in ones are held to the same address rules as the
	// proxy.
	URL string `yaml:"url" json:"url,omitempty"`
	// KeyEnv names the launcher's environment variable holding the real key.
	// Empty means OPENAI_API_KEY / ANTHROPIC_API_KEY / GEMINI_API_KEY for the built-in names,
	// and no key for others (unless KeyFile is set).
	KeyEnv string `yaml:"key_env" json:"key_env,omitempty"`
	// KeyFile names a file holding the real key; it wins over KeyEnv.
	KeyFile string `yaml:"key_file" json:"key_file,omitempty"`
	// Auth is how the key is sent: "bearer" (Authorization: Bearer KEY),
	// "x-api-key" or "x-goog-api-key". Empty means x-api-key for
	// "anthropic", x-goog-api-key for "google", bearer otherwise.
	Auth string `yaml:"auth" json:"auth,omitempty"`
	// Models, when not empty, is the only model names requests may ask for.
	Models []string `yaml:"models" json:"models,omitempty"`
	// CAFile names a PEM bundle of CAs trusted for this upstream instead of
	// the system roots.
	CAFile string `yaml:"ca_file" json:"ca_file,omitempty"`
}

// Limits are the gateway's resource bounds. Zero fields take the defaults
// named on each.
type Limits struct {
	// MaxConns is the most client connections served at once (default 64);
	// one more is answered 503 and closed.
	MaxConns int `yaml:"max_conns" json:"max_conns,omitempty"`
	// IdleTimeout closes a tunnel, stream or kept-alive connection that moved
	// no data for this long (default 5m).
	IdleTimeout Duration `yaml:"idle_timeout" json:"idle_timeout,omitempty"`
	// HeaderTimeout is how long a client may take to send a request head once
	// it started (default 10s).
	HeaderTimeout Duration `yaml:"header_timeout" json:"header_timeout,omitempty"`
	// MaxHeaderBytes bounds a request head (default 32 KiB); larger is 431.
	MaxHeaderBytes int `yaml:"max_header_bytes" json:"max_header_bytes,omitempty"`
	// MaxBodyBytes bounds a request body the gateway must read whole to
	// check the model name (default 32 MiB); larger is 413. Other bodies are
	// streamed and not held.
	MaxBodyBytes int64 `yaml:"max_body_bytes" json:"max_body_bytes,omitempty"`
	// MaxBufferedBytes bounds the memory all connections together may hold
	// in such bodies (default 64 MiB, or twice MaxBodyBytes when that is
	// more; it must be at least twice MaxBodyBytes, the most one growing
	// body of unknown length needs).
	MaxBufferedBytes int64 `yaml:"max_buffered_bytes" json:"max_buffered_bytes,omitempty"`
	// BufferWait is how long a request waits for MaxBufferedBytes to have
	// room for its body (default 2s); then it is answered 503.
	BufferWait Duration `yaml:"buffer_wait" json:"buffer_wait,omitempty"`
	// BodyTimeout is how long a client may take to send a body the gateway
	// reads whole (default 30s); slower is 408, and its memory is given
	// back.
	BodyTimeout Duration `yaml:"body_timeout" json:"body_timeout,omitempty"`
	// DialTimeout bounds one outgoing connection attempt (default 10s).
	DialTimeout Duration `yaml:"dial_timeout" json:"dial_timeout,omitempty"`
	// LogMaxBytes caps what the gateway writes to its decision log (default
	// 16 MiB, at least 64 KiB). Past it, decisions are counted but not
	// written; a note says so when it happens and the last line says how
	// many were dropped. Stats count every decision either way.
	LogMaxBytes int64 `yaml:"log_max_bytes" json:"log_max_bytes,omitempty"`
	// LogMaxLine caps one decision-log line (default 4 KiB, at least 512
	// bytes); a longer reason, then target, is cut and ends in "…".
	LogMaxLine int `yaml:"log_max_line" json:"log_max_line,omitempty"`
	// LogRepeatWindow collapses identical denials (same kind, target,
	// reason and status): the first is written, the rest of the window
	// become one line with a count (default 10s).
	LogRepeatWindow Duration `yaml:"log_repeat_window" json:"log_repeat_window,omitempty"`
}

// Duration is a time.Duration written as "10s" or "5m" in files.
type Duration time.Duration

// MarshalText writes d as time.Duration.String does.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// UnmarshalYAML reads a duration from a YAML scalar. internal/yamlfile has
// already refused a bad one (with its line, through Duration's Shape), so
// the error here is a second guard for direct yaml decoding.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if err := d.UnmarshalText([]byte(n.Value)); err != nil || n.Kind != yaml.ScalarNode {
		return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: duration %q: want a number with a unit, like 30s or 5m", n.Line, n.Value)}}
	}
	return nil
}

// UnmarshalText reads a time.ParseDuration string.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("duration %q: want a number with a unit, like 30s or 5m", b)
	}
	*d = Duration(v)
	return nil
}

// Defaults of Limits.
const (
	DefaultMaxConns       = 64
	DefaultIdleTimeout    = 5 * time.Minute
	DefaultHeaderTimeout  = 10 * time.Second
	DefaultMaxHeaderBytes = 32 << 10
	DefaultMaxBodyBytes   = 32 << 20
	DefaultMaxBuffered    = 64 << 20
	DefaultBufferWait     = 2 * time.Second
	DefaultBodyTimeout    = 30 * time.Second
	DefaultDialTimeout    = 10 * time.Second
	DefaultLogMaxBytes    = 16 << 20
	DefaultLogMaxLine     = 4 << 10
	DefaultLogRepeat      = 10 * time.Second
)

// withDefaults returns l with every zero field set to its default.
func (l Limits) withDefaults() Limits {
	if l.MaxConns == 0 {
		l.MaxConns = DefaultMaxConns
	}
	if l.IdleTimeout == 0 {
		l.IdleTimeout = Duration(DefaultIdleTimeout)
	}
	if l.HeaderTimeout == 0 {
		l.HeaderTimeout = Duration(DefaultHeaderTimeout)
	}
	if l.MaxHeaderBytes == 0 {
		l.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	if l.MaxBodyBytes == 0 {
		l.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if l.DialTimeout == 0 {
		l.DialTimeout = Duration(DefaultDialTimeout)
	}
	if l.MaxBufferedBytes == 0 {
		l.MaxBufferedBytes = max(DefaultMaxBuffered, 2*l.MaxBodyBytes)
	}
	if l.BufferWait == 0 {
		l.BufferWait = Duration(DefaultBufferWait)
	}
	if l.BodyTimeout == 0 {
		l.BodyTimeout = Duration(DefaultBodyTimeout)
	}
	if l.LogMaxBytes == 0 {
		l.LogMaxBytes = DefaultLogMaxBytes
	}
	if l.LogMaxLine == 0 {
		l.LogMaxLine = DefaultLogMaxLine
	}
	if l.LogRepeatWindow == 0 {
		l.LogRepeatWindow = Duration(DefaultLogRepeat)
	}
	return l
}

// builtin are the model routes that exist without configuration.
var builtin = map[string]Upstream{
	"openai":    {URL: "https://api.openai.com", KeyEnv: "OPENAI_API_KEY", Auth: AuthBearer},
	"anthropic": {URL: "https://api.anthropic.com", KeyEnv: "ANTHROPIC_API_KEY", Auth: AuthXAPIKey},
	// Google's Gemini API, which gemini-cli reaches at GOOGLE_GEMINI_BASE_URL
	// (agents/others.go) with its key in x-goog-api-key.
	"google": {URL: "https://generativelanguage.googleapis.com", KeyEnv: "GEMINI_API_KEY", Auth: AuthXGoogAPIKey},
}

// BuiltinRoutes names, sorted, the model routes that exist without
// configuration, each with its real key read by the gateway; the compose
// and Kubernetes renderers carry those keys to the gateway.
func BuiltinRoutes() []string {
	names := make([]string, 0, len(builtin))
	for n := range builtin {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Ways an upstream receives its key.
const (
	AuthBearer      = "bearer"
	AuthXAPIKey     = "x-api-key"
	AuthXGoogAPIKey = "x-goog-api-key"
)

// maxRunIDLen bounds the run id, which goes on every decision-log line.
const maxRunIDLen = 128

var routeName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9-]{0,31}$`) })

// FieldError is a validation error of one field, named by its path in the
// config file ("upstreams.local.url"), so that LoadConfig can add the line.
type FieldError struct {
	Field string
	Err   error
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Err.Error() }
func (e *FieldError) Unwrap() error { return e.Err }

// Validate checks c without touching the disk or the network.
func (c *Config) Validate() error {
	var errs []error
	names := make([]string, 0, len(c.Upstreams))
	for n := range c.Upstreams {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		errs = append(errs, validateUpstream(n, c.Upstreams[n])...)
	}
	allow := newAllowlist()
	for i, e := range c.Allow {
		if err := allow.add(e); err != nil {
			errs = append(errs, &FieldError{fmt.Sprintf("allow[%d]", i), err})
		}
	}
	if len(c.RunID) > maxRunIDLen {
		errs = append(errs, &FieldError{"run_id", fmt.Errorf("longer than %d bytes", maxRunIDLen)})
	}
	if c.TokenFile != "" && c.TokenEnv != "" {
		errs = append(errs, &FieldError{"token_file", errors.New("set token_file or token_env, not both")})
	}
	if c.Listen != "" {
		if _, _, err := splitListen(c.Listen); err != nil {
			errs = append(errs, &FieldError{"listen", err})
		}
	}
	errs = append(errs, c.Limits.validate()...)
	return errors.Join(errs...)
}

func validateUpstream(name string, u Upstream) []error {
	f := func(field string, err error) error { return &FieldError{"upstreams." + name + field, err} }
	var errs []error
	if !routeName().MatchString(name) {
		errs = append(errs, f("", errors.New("route names are lowercase letters, digits and '-', starting with a letter")))
	}
	if u.URL == "" && builtin[name].URL == "" {
		errs = append(errs, f(".url", errors.New("required (only openai, anthropic and google have a built-in URL)")))
	}
	if u.URL != "" {
		if err := checkUpstreamURL(u.URL); err != nil {
			errs = append(errs, f(".url", err))
		}
	}
	if u.Auth != "" && u.Auth != AuthBearer && u.Auth != AuthXAPIKey && u.Auth != AuthXGoogAPIKey {
		errs = append(errs, f(".auth", fmt.Errorf("%q: want %q, %q or %q", u.Auth, AuthBearer, AuthXAPIKey, AuthXGoogAPIKey)))
	}
	for i, m := range u.Models {
		if m == "" {
			errs = append(errs, f(fmt.Sprintf(".models[%d]", i), errors.New("empty model name")))
		}
	}
	return errs
}

func checkUpstreamURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%q is not a URL: %w", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("%q: want an http or https URL", raw)
	}
	if u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("%q: want scheme://host[:port][/path] without credentials, query or fragment", raw)
	}
	if _, _, err := ParseHost(u.Hostname()); err != nil {
		return err
	}
	return nil
}

func (l Limits) validate() []error {
	var errs []error
	neg := func(field string, bad bool) {
		if bad {
			errs = append(errs, &FieldError{"limits." + field, errors.New("must not be negative")})
		}
	}
	neg("max_conns", l.MaxConns < 0)
	neg("idle_timeout", l.IdleTimeout < 0)
	neg("header_timeout", l.HeaderTimeout < 0)
	neg("max_header_bytes", l.MaxHeaderBytes < 0)
	neg("max_body_bytes", l.MaxBodyBytes < 0)
	neg("dial_timeout", l.DialTimeout < 0)
	neg("max_buffered_bytes", l.MaxBufferedBytes < 0)
	neg("buffer_wait", l.BufferWait < 0)
	neg("body_timeout", l.BodyTimeout < 0)
	neg("log_max_bytes", l.LogMaxBytes < 0)
	neg("log_max_line", l.LogMaxLine < 0)
	neg("log_repeat_window", l.LogRepeatWindow < 0)
	atLeast := func(field string, v, min int64) {
		if v > 0 && v < min {
			errs = append(errs, &FieldError{"limits." + field, fmt.Errorf("must be at least %d", min)})
		}
	}
	atLeast("max_header_bytes", int64(l.MaxHeaderBytes), 1024)
	atLeast("log_max_bytes", l.LogMaxBytes, minLogMaxBytes)
	body := l.MaxBodyBytes
	if body <= 0 {
		body = DefaultMaxBodyBytes
	}
	if l.MaxBufferedBytes > 0 && l.MaxBufferedBytes < 2*body {
		errs = append(errs, &FieldError{"limits.max_buffered_bytes", fmt.Errorf("must be at least %d, twice max_body_bytes", 2*body)})
	}
	atLeast("log_max_line", int64(l.LogMaxLine), minLogMaxLine)
	return errs
}

// ParseUpstreamFlag reads the value of `--upstream NAME=URL`.
func ParseUpstreamFlag(s string) (name, rawURL string, err error) {
	name, rawURL, ok := strings.Cut(s, "=")
	if !ok || name == "" || rawURL == "" {
		return "", "", fmt.Errorf("--upstream %q: want NAME=URL, for example openai=http://127.0.0.1:8080", s)
	}
	if !routeName().MatchString(name) {
		return "", "", fmt.Errorf("--upstream %q: route names are lowercase letters, digits and '-'", s)
	}
	if err := checkUpstreamURL(rawURL); err != nil {
		return "", "", fmt.Errorf("--upstream %s: %w", name, err)
	}
	return name, rawURL, nil
}

// SetUpstreamURL points the named route at rawURL, keeping its other
// settings; the flag `--upstream NAME=URL` calls it.
func (c *Config) SetUpstreamURL(name, rawURL string) {
	if c.Upstreams == nil {
		c.Upstreams = map[string]Upstream{}
	}
	u := c.Upstreams[name]
	u.URL = rawURL
	c.Upstreams[name] = u
}
