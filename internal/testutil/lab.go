package testutil

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// LabAudit runs the lab's audit script (reference material outside the
// project, named by AGENTBOX_LAB_AUDIT; the Makefile points it at
// ../shared/lab/audit-sandbox.sh) on a container, as an oracle, and returns
// the finding codes it names and its output. env adds to the script's
// environment (PROJECT_DIR=…, ENGINE=podman). Without the script the test
// skips, or fails in strict mode.
func LabAudit(t testing.TB, container string, env ...string) ([]string, string) {
	t.Helper()
	script := os.Getenv("AGENTBOX_LAB_AUDIT")
	if script == "" {
		Skip(t, "AGENTBOX_LAB_AUDIT does not name the lab's audit-sandbox.sh")
		return nil, ""
	}
	cmd := exec.Command("bash", script, container)
	cmd.Env = append(append(os.Environ(), "LABBOOK="+filepath.Join(t.TempDir(), "labbook.md")), env...)
	b, err := cmd.CombinedOutput()
	out := string(b)
	var ee *exec.ExitError
	if err != nil && (!errors.As(err, &ee) || ee.ExitCode() != 1) {
		t.Fatalf("%s %s: %v\n%s", script, container, err, out)
	}
	var codes []string
	for _, line := range strings.Split(out, "\n") {
		rest, ok := strings.CutPrefix(line, "  [")
		if code, _, found := strings.Cut(rest, "] "); ok && found {
			codes = append(codes, code)
		}
	}
	if (err == nil) != (len(codes) == 0) {
		t.Fatalf("the lab's script's exit status disagrees with its findings %v:\n%s", codes, out)
	}
	return codes, out
}
