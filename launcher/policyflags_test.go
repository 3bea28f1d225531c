package launcher

import (
	"errors"
	"testing"

	"github.com/agentbox/agentbox/policy"
)

// The flags' policy keeps every flag, and a mistyped --accept code or a
// malformed --upstream is an input error naming it.
func TestPolicyFlagsPolicy(t *testing.T) {
	f := PolicyFlags{
		Workspace: "/w", ReadOnly: []string{"/ro"}, RW: []string{"/rw"}, Env: []string{"LANG"}, Memory: "1GiB", Pids: 9, CPUWeight: 7,
		Runtime: "crun", Rootfs: "/r", Accept: []string{"extra-writable-mount=cache"}, Allow: []string{"h:443"},
		Upstreams: []string{"openai=https://llm.test/v1"}, LocalTCP: true, Isolation: "user",
	}
	p, err := f.Policy()
	if err != nil {
		t.Fatal(err)
	}
	if p.Workspace != "/w" || p.Binds.ReadOnly[0] != "/ro" || p.Binds.ReadWrite[0] != "/rw" || p.Env.Allow[0] != "LANG" ||
		p.Limits != (policy.Limits{Memory: "1GiB", Pids: 9, CPUWeight: 7}) || p.Runtime != "crun" || p.Rootfs != "/r" || p.Isolation != "user" ||
		!p.Network.LocalTCP || p.Network.Allow[0] != "h:443" || p.Gateway.Upstreams["openai"].URL != "https://llm.test/v1" ||
		len(p.Accept) != 1 || p.Accept[0] != (policy.Acceptance{Code: "extra-writable-mount", Reason: "cache"}) {
		t.Errorf("policy %+v does not carry every flag", p)
	}
	for _, bad := range []PolicyFlags{{Accept: []string{"extra-writeable-mount=typo"}}, {Upstreams: []string{"no-url"}}} {
		var in *policy.InputError
		if _, err := bad.Policy(); !errors.As(err, &in) {
			t.Errorf("%+v: %v, want an input error", bad, err)
		}
	}
}
