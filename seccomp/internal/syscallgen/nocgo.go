//go:build !(cgo && linux)

package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "syscallgen: needs cgo and libseccomp on Linux (apt-get install gcc libseccomp-dev; CGO_ENABLED=1)")
	os.Exit(1)
}
