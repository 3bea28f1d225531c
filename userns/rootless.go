package userns

import "os/exec"

// HaveNewIDMap reports whether newuidmap and newgidmap are both on PATH.
func HaveNewIDMap() bool {
	_, errU := exec.LookPath("newuidmap")
	_, errG := exec.LookPath("newgidmap")
	return errU == nil && errG == nil
}
