package doctor

import (
	"fmt"
)

// checkRuntimes reports which runtimes are installed, which one a run
// gets by default here and why, and, for a runtime `agentbox run`
// refuses (runsc without --pass-fd), the refusal: never a PASS; for a
// runsc it accepts, that it does and how.
func checkRuntimes(f *Facts) []Result {
	var out []Result
	def := f.defaultRuntime()
	for _, rt := range f.Runtimes {
		r := Result{ID: "runtime-" + rt.Name, Status: Pass, Layer: LayerRuntime, Detail: describeRuntime(rt)}
		if rt.Refusal != "" {
			r.Status, r.Layer = Warn, ""
			r.Detail += "; agentbox run --runtime " + rt.Name + " refuses it (exit code 4, the host cannot provide the boundary): " + rt.Refusal
			r.Fix = "use the default runtime (" + def + "), or a gVisor release whose `runsc help run` lists --pass-fd (scripts/runsc-build.sh builds one; pass it as --runtime PATH)"
		} else if rt.Name == "runsc" {
			r.Detail += "; agentbox run --runtime runsc accepts it: its run passes agentbox-init its channel (--pass-fd), and the self-test names and probes what gVisor's Sentry provides instead of the host kernel (docs/gvisor.md)"
		}
		out = append(out, r)
	}
	if !f.installed(def) {
		return append(out, Result{
			ID: "runtime-default", Status: Fail, Layer: LayerRuntime,
			Detail: "no OCI runtime that agentbox chooses by default (crun or runc) is on PATH, so agentbox run cannot start a sandbox without --runtime",
			Fix:    installCommand(f.OS, def),
		})
	}
	return append(out, Result{
		ID: "runtime-default", Status: Pass, Layer: LayerRuntime,
		Detail: fmt.Sprintf("agentbox run uses %s by default on this host, through the OCI runtime's command line (engine runtime; containerd only when asked: --engine containerd or engine: containerd): %s; --runtime, or runtime: in a policy file, overrides it", def, f.Default.Reason),
	})
}

func (f *Facts) installed(name string) bool {
	for _, rt := range f.Runtimes {
		if rt.Name == name {
			return true
		}
	}
	return false
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
