package launcher

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/agentbox/agentbox/doctor"
	"github.com/agentbox/agentbox/policy"
)

// DoctorOptions are doctor's options for a launcher with getenv's
// environment: the self-test, the runtimes' verdicts, the run root, and
// what the policy the self-test plans with says of containerd (the
// containerd check examines the daemon that policy would use). The error
// wraps ErrEngineElsewhere when that policy names an engine this binary
// does not link: doctor is then agentbox-containerd's, whole
// (ExecHelper), as a run would be. The containerd check also reports the
// program a launch on containerd runs in (containerdHelper).
func DoctorOptions(getenv func(string) string) (doctor.Options, error) {
	o := doctor.Options{SelfTest: DoctorSelfTest(getenv), Verdicts: DoctorVerdicts(getenv), RunRoot: DoctorRunRoot(getenv), Leftovers: doctorLeftovers(getenv)}
	o.Containerd.Helper, o.Containerd.HelperErr = containerdHelper()
	p, err := doctorPolicy(getenv)
	if err != nil {
		return o, nil // the self-test plans with the same files and reports it
	}
	o.Containerd.Engine, o.Containerd.Address = p.Engine == EngineContainerd, p.Address
	if _, ok := providers[EngineContainerd]; o.Containerd.Engine && !ok {
		return o, fmt.Errorf("engine %s: %w", p.Engine, ErrEngineElsewhere)
	}
	return o, nil
}

// doctorLeftovers is doctor's look for what earlier builds left
// (CountHiddenCgroups), against the run root a run would use.
func doctorLeftovers(getenv func(string) string) doctor.LeftoversFunc {
	return func() (int, string, error) {
		return CountHiddenCgroups(Dirs{RunRoot: DoctorRunRoot(getenv)})
	}
}

// containerdHelper is the program a launch on containerd runs in: this
// one, when it links the engine, else agentbox-containerd beside it
// (FindHelper, with its checks), or why there is none.
func containerdHelper() (path, why string) {
	if _, ok := providers[EngineContainerd]; ok {
		self, err := os.Executable()
		if err != nil {
			return "", "the running executable: " + err.Error()
		}
		return self, ""
	}
	path, err := FindHelper(ContainerdHelperName)
	if err != nil {
		return "", err.Error()
	}
	return path, ""
}

// doctorSources are the policy files doctor's self-test plans with: the
// user's own, and none in its fresh, empty workspace ws.
func doctorSources(getenv func(string) string, ws string) (policy.Sources, error) {
	dir, err := policy.ConfigDir(getenv)
	return policy.Sources{ConfigDir: dir, Workspace: ws, EUID: uint32(os.Geteuid())}, err
}

// doctorPolicy is the merged policy of doctorSources.
func doctorPolicy(getenv func(string) string) (policy.Policy, error) {
	ws, err := os.MkdirTemp("", "agentbox-doctor-")
	if err != nil {
		return policy.Policy{}, err
	}
	defer os.RemoveAll(ws)
	src, err := doctorSources(Config{Getenv: getenv}.getenv, ws)
	if err != nil {
		return policy.Policy{}, err
	}
	p, _, err := LoadPolicy(policy.Policy{}, src)
	return p, err
}

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
		// Open to others' search, as a project directory is: the sandbox's
		// root must reach the mounts inside it for crun to be the default
		// runtime the self-test proves (policy.ChooseRuntime).
		if err := os.Chmod(ws, 0o755); err != nil {
			return doctor.SelfTestResult{}, err
		}
		cfg := Config{ProbesOnly: true, Policy: policy.Policy{Workspace: ws}, Getenv: getenv}
		if cfg.Sources, err = doctorSources(cfg.getenv, ws); err != nil {
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

// DoctorVerdicts are the self-test verdicts of the runtime-facts cache
// under the run root that getenv names, by which doctor reports the
// default runtime as a run would choose it.
func DoctorVerdicts(getenv func(string) string) doctor.Verdicts {
	return func(name, path string) (policy.SelfTestVerdict, string) {
		dirs, err := FindDirs(getenv)
		if err != nil {
			return "", ""
		}
		cached, key, err := readRuntimeCache(dirs.RunRoot, name, path)
		if err != nil {
			return "", ""
		}
		for _, e := range cached {
			if e.Key == key {
				return e.SelfTest, e.SelfTestRun
			}
		}
		return "", ""
	}
}

// DoctorRunRoot is the run root `agentbox run` would use with getenv's
// environment (doctor.Options.RunRoot), whether or not it exists or
// passes FindDirs' checks: doctor reports the filesystem it is on.
func DoctorRunRoot(getenv func(string) string) string { return runRoot(getenv, os.Geteuid()) }
