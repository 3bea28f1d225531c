package launcher

import (
	"context"
	"errors"
	"os"

	"github.com/agentbox/agentbox/doctor"
	"github.com/agentbox/agentbox/policy"
)

// DoctorSelfTest is doctor's end-to-end proof (doctor.Options.SelfTest):
// the self-test of a sandbox around a fresh, empty workspace, with the
// user's own policy file and no other, printing nothing. A teardown that
// left residue fails it.
func DoctorSelfTest(getenv func(string) string) doctor.SelfTestFunc {
	return func(ctx context.Context) (doctor.SelfTestResult, error) {
		ws, err := os.MkdirTemp("", "agentbox-doctor-")
		if err != nil {
			return doctor.SelfTestResult{}, err
		}
		defer os.RemoveAll(ws)
		cfg := Config{ProbesOnly: true, Policy: policy.Policy{Workspace: ws}, Getenv: getenv}
		cfg.Sources = policy.Sources{Workspace: ws, EUID: uint32(os.Geteuid())}
		if cfg.Sources.ConfigDir, err = policy.ConfigDir(cfg.getenv); err != nil {
			return doctor.SelfTestResult{}, err
		}
		res, err := Run(ctx, cfg)
		td := res.Record.Teardown
		if err == nil && td != nil && !td.Clean() {
			err = errors.New("teardown left residue: " + td.Summary())
		}
		return doctor.SelfTestResult{RunID: res.Record.RunID, Probes: res.Record.Probes}, err
	}
}
