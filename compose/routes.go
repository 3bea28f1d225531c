package compose

import (
	"fmt"
	"net/netip"
	"net/url"
	"slices"
	"sort"

	"github.com/agentbox/agentbox/netpolicy"
)

// keyedRoutes are the model routes whose real key the project carries to the
// gateway as a Docker secret, sorted: the agent's own route, and every
// route of the policy that has a key (a built-in one, or one naming key_env
// or key_file). In compose the key always arrives as a secret file under
// secrets/: the policy's key_env and key_file name the launcher's sources.
func (r *renderer) keyedRoutes() []string {
	set := map[string]bool{}
	if k, ok := keyRoutes[r.launch.Agent]; ok {
		set[k.Route] = true
	}
	for name, u := range r.plan.Gateway.Upstreams {
		if slices.Contains(netpolicy.BuiltinRoutes(), name) || u.KeyEnv != "" || u.KeyFile != "" {
			set[name] = true
		}
	}
	routes := make([]string, 0, len(set))
	for name := range set {
		routes = append(routes, name)
	}
	sort.Strings(routes)
	return routes
}

// secretName is the Docker secret, and the file under secrets/, holding a
// route's real key.
func secretName(route string) string { return route + "_api_key" }

// upstreams translates the policy's model routes for the gateway's config,
// each keyed route reading its key from its secret.
func (r *renderer) upstreams() (map[string]netpolicy.Upstream, error) {
	ups := map[string]netpolicy.Upstream{}
	for name, u := range r.plan.Gateway.Upstreams {
		if u.CAFile != "" {
			return nil, &InputError{
				Field: "gateway.upstreams." + name + ".ca_file", Msg: "a CA file on the host does not reach the gateway's container",
				Fix: "drop ca_file for the compose project, or add the CA to the host's bundle, which the gateway image carries",
			}
		}
		ups[name] = netpolicy.Upstream{URL: u.URL, Auth: u.Auth, Models: u.Models}
		if loopbackURL(u.URL) {
			r.out.Notes = append(r.out.Notes, fmt.Sprintf("the %s route points at %s: in the gateway's container that is the gateway itself, not this host; use an address the container can reach", name, u.URL))
		}
	}
	for _, route := range r.keyedRoutes() {
		u := ups[route]
		u.KeyFile = secretsPath + "/" + secretName(route)
		ups[route] = u
	}
	if len(ups) == 0 {
		return nil, nil
	}
	return ups, nil
}

func loopbackURL(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	if u.Hostname() == "localhost" {
		return true
	}
	a, err := netip.ParseAddr(u.Hostname())
	return err == nil && a.IsLoopback()
}
