package engine

import (
	"os"
	"path/filepath"
	"strings"
)

// cgroupRoot is where the cgroup hierarchies are mounted.
const cgroupRoot = "/sys/fs/cgroup"

// HybridUnified is where a hybrid cgroup host mounts its cgroup v2
// hierarchy beside the v1 controllers.
const HybridUnified = cgroupRoot + "/unified"

// HiddenUnified returns the path to hide from crun, or "": crun refuses a
// hybrid cgroup layout whose v2 hierarchy holds any controller ("cgroups in
// hybrid mode not supported"), so agentbox runs it, as root, in a private
// mount namespace where an empty tmpfs covers that mount, and the host
// looks like plain v1.
func HiddenUnified(runtime string, root bool) string {
	if filepath.Base(runtime) != "crun" || !root || !HybridCgroup() {
		return ""
	}
	return HybridUnified
}

// HybridCgroup reports whether this host mounts a v2 hierarchy that holds
// controllers beside the v1 ones, the layout crun refuses.
func HybridCgroup() bool {
	b, err := os.ReadFile(filepath.Join(HybridUnified, "cgroup.controllers"))
	return err == nil && strings.TrimSpace(string(b)) != ""
}
