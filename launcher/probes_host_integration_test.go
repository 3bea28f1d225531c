//go:build integration && linux

package launcher

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/internal/testutil"
	"github.com/agentbox/agentbox/selftest"
)

// hostProbes runs the named probes with agentbox-init as root on the host,
// outside any sandbox, and returns their results by name. With stand-ins,
// it runs them in a private mount namespace where each stand-in file sits
// on a tmpfs over its cover directory; nothing of that reaches the host's
// own mounts.
func hostProbes(t *testing.T, names []string, standIns []standIn) map[string]selftest.Result {
	t.Helper()
	if len(names) == 0 {
		return nil
	}
	initBin := probeInitBinary(t)
	cmd := exec.Command(initBin, "--probe", strings.Join(names, ","), "--json")
	if len(standIns) > 0 {
		unshare := testutil.RequireBinary(t, "unshare", "util-linux")
		cmd = exec.Command(unshare, "--mount", "--propagation", "private", "--", "/bin/sh", "-c", standInScript(standIns),
			"agentbox-stand-in", initBin, strings.Join(names, ","))
	}
	cfg, err := json.Marshal(selftest.InitConfig{Version: selftest.ProtocolVersion, RunID: "host"})
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stdin, cmd.Stderr = bytes.NewReader(cfg), &stderr
	out, err := cmd.Output()
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) { // 1: some probe failed, as wanted
		t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, stderr.String())
	}
	results := map[string]selftest.Result{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var r selftest.Result
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("host probe output %q: %v", sc.Text(), err)
		}
		results[r.Probe] = r
	}
	return results
}

// standInScript mounts a tmpfs over each cover directory (/proc last: mount
// may read it), creates each stand-in file, and executes agentbox-init
// ("$1") with the probes ("$2").
func standInScript(standIns []standIn) string {
	var covers []string
	for _, s := range standIns {
		if !slices.Contains(covers, s.cover) {
			covers = append(covers, s.cover)
		}
	}
	sort.SliceStable(covers, func(i, j int) bool { return covers[j] == "/proc" && covers[i] != "/proc" })
	lines := []string{"set -e"}
	for _, c := range covers {
		lines = append(lines, "mount -t tmpfs agentbox-stand-in "+c)
	}
	for _, s := range standIns {
		lines = append(lines, "mkdir -p "+filepath.Dir(s.file), ": > "+s.file)
	}
	lines = append(lines, `exec "$1" --probe "$2" --json`)
	return strings.Join(lines, "\n")
}

// kernelLacks reports whether this kernel was built without the object a
// probe checks: no host path matches its glob.
func kernelLacks(t *testing.T, glob string) bool {
	t.Helper()
	if glob == "" {
		return false
	}
	m, err := filepath.Glob(glob)
	if err != nil {
		t.Fatal(err)
	}
	return len(m) == 0
}
