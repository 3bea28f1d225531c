package launcher

import (
	"fmt"
	"os"
	"testing"
)

// setupIntegration, set by the integration tests' file, builds what they
// need before any test runs and returns how to remove it.
var setupIntegration func() (cleanup func(), err error)

// TestMain runs the test binary as the fake engine's sandbox init when
// fakeInitEnv says so (helper-process style), and the tests otherwise.
func TestMain(m *testing.M) {
	if spec := os.Getenv(fakeInitEnv); spec != "" {
		os.Exit(fakeInitMain(spec))
	}
	cleanup := func() {}
	if setupIntegration != nil {
		c, err := setupIntegration()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		cleanup = c
	}
	code := m.Run()
	cleanup()
	os.Exit(code)
}
