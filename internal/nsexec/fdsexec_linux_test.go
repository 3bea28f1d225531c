package nsexec

import (
	"io"
	"os"
	"path/filepath"
	"testing"
)

// With --stderr stdout the runtime's create (and so the sandbox, which
// gets the runtime's stdio) writes its stderr to its stdout, in order;
// any other value is refused before anything runs.
func TestFdsExecStderrIsStdout(t *testing.T) {
	runtime := filepath.Join(t.TempDir(), "runtime")
	if err := os.WriteFile(runtime, []byte("#!/bin/sh\nprintf 1; printf 2 >&2; printf 3; printf 4 >&2\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	capture := func(flags map[string]string) (code int, stdout, stderr string) {
		t.Helper()
		outR, outW, _ := os.Pipe()
		errR, errW, _ := os.Pipe()
		saved := [2]*os.File{os.Stdout, os.Stderr}
		os.Stdout, os.Stderr = outW, errW
		code = fdsMain(flags, []string{runtime, "create", "id"})
		os.Stdout, os.Stderr = saved[0], saved[1]
		outW.Close()
		errW.Close()
		o, _ := io.ReadAll(outR)
		e, _ := io.ReadAll(errR)
		return code, string(o), string(e)
	}
	if code, out, errs := capture(map[string]string{"--stderr": "stdout"}); code != 0 || out != "1234" || errs != "" {
		t.Errorf("--stderr stdout: exit %d, stdout %q, stderr %q; want 0, \"1234\", nothing", code, out, errs)
	}
	if code, out, errs := capture(nil); code != 0 || out != "13" || errs != "24" {
		t.Errorf("without it: exit %d, stdout %q, stderr %q; want 0, \"13\", \"24\"", code, out, errs)
	}
	if code, out, _ := capture(map[string]string{"--stderr": "/tmp/x"}); code != 4 || out != "" {
		t.Errorf("--stderr /tmp/x: exit %d, stdout %q; want 4 and nothing run", code, out)
	}
}
