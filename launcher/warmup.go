package launcher

import (
	"encoding/json"
	"sync"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/agentbox/agentbox/engine"
	"github.com/agentbox/agentbox/engine/advisory"
	"github.com/agentbox/agentbox/ledger"
	"github.com/agentbox/agentbox/selftest"
)

// warmOnce makes warmUp start its goroutine once per process.
var warmOnce sync.Once

// warmUp starts, once per process, the first-use work that the recipe's
// steps would otherwise do on the launch's path, on a goroutine of its own
// while the plan is made (one core works the recipe, the other is idle
// until the runtime runs; docs/bench.md, branch presteps):
// encoding/json's reflection over the types the launch writes (the
// bundle's config.json, about 2 ms on the first one; meta.json; init's
// configuration; the ledger's record) and the parse of the embedded
// runtime advisory table. It makes nothing a step reads from it: the steps
// find the same encoders and table in the packages' caches (encoding/json
// builds each type's encoder once, and a step that asks while it is being
// built waits for it; advisory.Load parses once), or build them
// themselves when they get there first. What is written is the same.
func warmUp() {
	warmOnce.Do(func() {
		go func() {
			for _, v := range []any{&specs.Spec{}, &engine.Meta{}, &selftest.Message{}, &ledger.Record{}} {
				_, _ = json.Marshal(v)
			}
			_, _ = advisory.Load()
		}()
	})
}
