package policy

import (
	"strings"
)

// SystemPath is the PATH inside the sandbox, after any install directories.
const SystemPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// fixedEnv are variables agentbox sets itself; the allowlist cannot pass
// the launcher's values of these through.
var fixedEnv = map[string]bool{"PATH": true, "HOME": true, "USER": true, "LOGNAME": true}

// resolveEnv builds the agent's environment from the allowlist only:
// nothing else of the launcher's environment crosses.
func (r *resolver) resolveEnv() error {
	allow := r.p.Env.Allow
	if allow == nil {
		allow = DefaultEnvAllow
	}
	id := r.plan.Identity
	path := SystemPath
	if len(r.bins) > 0 {
		path = strings.Join(r.bins, ":") + ":" + path
	}
	env := []string{"PATH=" + path, "HOME=" + id.Home, "USER=" + id.User, "LOGNAME=" + id.User}
	if r.user() {
		// The host's /tmp is outside the account's Landlock ruleset.
		env = append(env, "TMPDIR="+id.Home+"/tmp")
	}
	for _, kv := range r.h.Environ {
		name, _, ok := strings.Cut(kv, "=")
		if ok && !fixedEnv[name] && !(r.user() && name == "TMPDIR") && allowed(name, allow) {
			env = append(env, kv)
		}
	}
	r.plan.Env = env
	return nil
}

// allowed matches a name against exact names and NAME* prefix patterns.
func allowed(name string, allow []string) bool {
	for _, a := range allow {
		if p, ok := strings.CutSuffix(a, "*"); ok && strings.HasPrefix(name, p) || a == name {
			return true
		}
	}
	return false
}
