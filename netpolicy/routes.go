package netpolicy

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"time"
)

// maxResponseHeaderBytes bounds the response head the gateway reads from a
// model upstream or a proxied destination.
const maxResponseHeaderBytes = 1 << 20

// buildRoutes merges the built-in routes with the configured ones and reads
// each route's key.
func (g *Gateway) buildRoutes(cfg Config, getenv func(string) string) (map[string]*route, error) {
	merged := map[string]Upstream{}
	for n := range builtin {
		merged[n] = Upstream{}
	}
	for n, u := range cfg.Upstreams {
		merged[n] = u
	}
	routes := map[string]*route{}
	for name, u := range merged {
		r, err := g.newRoute(name, u, getenv)
		if err != nil {
			return nil, fmt.Errorf("upstream %s: %w", name, err)
		}
		routes[name] = r
	}
	return routes, nil
}

func (g *Gateway) newRoute(name string, u Upstream, getenv func(string) string) (*route, error) {
	def := builtin[name]
	r := &route{name: name, explicit: u.URL != "", auth: firstNonEmpty(u.Auth, def.Auth, AuthBearer)}
	raw := firstNonEmpty(u.URL, def.URL)
	base, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("url %q: %w", raw, err)
	}
	r.base = base
	if err := r.readKey(u, def, getenv); err != nil {
		return nil, err
	}
	if len(r.key) > maxKeyLen {
		return nil, fmt.Errorf("the key (%s) is longer than %d bytes", r.keySrc, maxKeyLen)
	}
	r.scrub = newScrubber(r.key)
	if len(u.Models) > 0 {
		r.models = map[string]bool{}
		for _, m := range u.Models {
			r.models[m] = true
		}
	}
	tlsConf, err := upstreamTLS(u.CAFile)
	if err != nil {
		return nil, err
	}
	r.rt = &http.Transport{
		Proxy:                  nil, // the gateway is the way out; never chain to the launcher's proxy
		DialContext:            g.upstreamDialer(!r.explicit),
		TLSClientConfig:        tlsConf,
		ForceAttemptHTTP2:      true,
		MaxIdleConnsPerHost:    16,
		IdleConnTimeout:        90 * time.Second,
		TLSHandshakeTimeout:    time.Duration(g.limits.DialTimeout),
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: maxResponseHeaderBytes,
	}
	return r, nil
}

// readKey reads the route's real key: from KeyFile, else from KeyEnv (or the
// built-in variable). A route may have no key (a local model server).
func (r *route) readKey(u, def Upstream, getenv func(string) string) error {
	if u.KeyFile != "" {
		k, err := readSecret(u.KeyFile)
		if err != nil {
			return fmt.Errorf("key_file: %w", err)
		}
		r.key, r.keySrc = k, "file:"+u.KeyFile
		return nil
	}
	env := firstNonEmpty(u.KeyEnv, def.KeyEnv)
	if env == "" {
		return nil
	}
	r.keySrc = "env:" + env
	r.key = getenv(env)
	if r.key != "" {
		if err := checkSecret(r.key); err != nil {
			return fmt.Errorf("$%s: %w", env, err)
		}
	}
	return nil
}

// upstreamTLS trusts the CAs in caFile, or the system roots when it is empty.
func upstreamTLS(caFile string) (*tls.Config, error) {
	conf := &tls.Config{MinVersion: tls.VersionTLS12}
	if caFile == "" {
		return conf, nil
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("ca_file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("ca_file %s: no PEM certificate in it", caFile)
	}
	conf.RootCAs = pool
	return conf, nil
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
