package doctor

import (
	"fmt"
)

// checkRuntimes reports which runtimes are installed and whether the
// default one is.
func checkRuntimes(f *Facts) []Result {
	var out []Result
	names := []string{}
	for _, rt := range f.Runtimes {
		names = append(names, rt.Name)
		out = append(out, Result{ID: "runtime-" + rt.Name, Status: Pass, Layer: LayerRuntime, Detail: describeRuntime(rt)})
	}
	switch {
	case len(names) == 0:
		out = append(out, Result{
			ID: "runtime-" + defaultRuntime, Status: Fail, Layer: LayerRuntime,
			Detail: "no OCI runtime found on PATH (runc, crun or runsc): agentbox cannot start a sandbox",
			Fix:    installCommand(f.OS, defaultRuntime),
		})
	case !contains(names, defaultRuntime):
		out = append(out, Result{
			ID: "runtime-" + defaultRuntime, Status: Warn, Layer: LayerRuntime,
			Detail: fmt.Sprintf("runc, the default runtime, is not installed; %s is: runs need runtime: %s in agentbox.yaml (or --runtime %s)", names[0], names[0], names[0]),
			Fix:    installCommand(f.OS, defaultRuntime),
		})
	}
	return out
}

func describeRuntime(rt RuntimeFacts) string {
	v := rt.Version
	if v == "" {
		v = "(version unknown: " + rt.VersionErr + ")"
	}
	s := fmt.Sprintf("%s %s at %s", rt.Name, v, rt.Path)
	if rt.Package != nil {
		s += fmt.Sprintf(", from package %s %s (%s)", rt.Package.Name, rt.Package.Version, rt.Package.Manager)
	} else {
		s += ", not from a package"
	}
	if rt.Name == "runsc" {
		s += "; doctor's CVE table has no runsc entries"
	}
	return s
}

// installCommand is the line that installs a package on this distribution.
func installCommand(os OSRelease, pkg string) string {
	switch os.ID {
	case "debian", "ubuntu":
		return "apt-get install " + pkg
	case "fedora", "rhel", "centos", "rocky", "almalinux":
		return "dnf install " + pkg
	}
	return "install " + pkg + " with your distribution's package manager"
}
