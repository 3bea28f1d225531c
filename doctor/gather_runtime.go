package doctor

import (
	"context"
	"regexp"
	"slices"
	"strings"

	"github.com/agentbox/agentbox/engine"
	"github.com/agentbox/agentbox/engine/advisory"
	"github.com/agentbox/agentbox/policy"
)

// runtimeNames are the OCI runtimes agentbox can drive, default first.
var runtimeNames = []string{"runc", "crun", "runsc"}

func gatherRuntimes(ctx context.Context, h Host, f *Facts) {
	for _, name := range runtimeNames {
		p, err := h.Sys.LookPath(name)
		if err != nil {
			continue
		}
		rt := InspectRuntime(ctx, h, name, p)
		if name == "runsc" {
			help, _ := h.Sys.Output(ctx, p, "help", "run") // runsc exits 0 or 2 after printing help
			if !engine.RunscPassesFiles(string(help)) {
				rt.Refusal = engine.RunscRefusal(p, rt.Version).Error()
			}
		}
		f.Runtimes = append(f.Runtimes, rt)
	}
	f.Default = chooseDefault(f, nil)
}

// Verdicts answers, for the runtime name at path, the verdict of its last
// self-test on this host and the run that gave it (the launcher's
// runtime-facts cache); nil knows none.
type Verdicts func(name, path string) (policy.SelfTestVerdict, string)

// chooseDefault is the planner's choice of the default runtime from the
// facts doctor gathered, with the verdicts v.
func chooseDefault(f *Facts, v Verdicts) DefaultRuntime {
	h := policy.Host{EUID: uint32(f.User.EUID), HybridCgroup: f.Cgroup.Mode == "hybrid"}
	for _, rt := range f.Runtimes {
		if !slices.Contains(policy.DefaultRuntimes, rt.Name) {
			continue
		}
		in := policy.InstalledRuntime{Name: rt.Name, Path: rt.Path}
		if v != nil {
			in.SelfTest, in.Run = v(rt.Name, rt.Path)
		}
		h.Runtimes = append(h.Runtimes, in)
	}
	name, reason := policy.ChooseRuntime(h, "")
	return DefaultRuntime{Name: name, Reason: reason}
}

// defaultRuntime is the runtime a run without --runtime gets here.
func (f *Facts) defaultRuntime() string {
	if f.Default.Name == "" {
		return "runc"
	}
	return f.Default.Name
}

// InspectRuntime reads what the advisory table judges a runtime by: the
// version the binary at path reports (it runs `PATH --version`) and the
// package that installed it. `agentbox run` asks it about the runtime its
// plan chose, doctor about every runtime on PATH.
func InspectRuntime(ctx context.Context, h Host, name, path string) RuntimeFacts {
	rt := RuntimeFacts{Name: name, Path: path}
	pkg := make(chan *Package, 1) // asked meanwhile: each is a few commands
	go func() { pkg <- owningPackage(ctx, h, name, path) }()
	out, err := h.Sys.Output(ctx, path, "--version")
	rt.Version = parseRuntimeVersion(string(out))
	if rt.Version == "" {
		rt.VersionErr = "no version in `" + name + " --version` output"
		if err != nil {
			rt.VersionErr = err.Error()
		}
	}
	rt.Package = <-pkg
	return rt
}

// Advisory is rt as the advisory table's judgement takes it.
func (rt RuntimeFacts) Advisory() advisory.Runtime {
	return advisory.Runtime{Name: rt.Name, Path: rt.Path, Version: rt.Version, Package: rt.Package}
}

// runtimeVersionRE finds "runc version 1.1.5+ds1", "crun version 1.8.1" or
// "runsc version release-20240513.0" on the first line.
var runtimeVersionRE = regexp.MustCompile(`(?m)^\S+ version (\S+)`)

func parseRuntimeVersion(out string) string {
	m := runtimeVersionRE.FindStringSubmatch(out)
	if m == nil {
		return ""
	}
	return m[1]
}

// owningPackage asks dpkg, then rpm, which package installed path; name
// is the runtime's, the package that usually does.
func owningPackage(ctx context.Context, h Host, name, p string) *Package {
	if _, err := h.Sys.LookPath("dpkg-query"); err == nil {
		if pkg := dpkgNamesake(ctx, h, name, p); pkg != nil {
			return pkg
		}
		if pkg := dpkgOwner(ctx, h, p); pkg != nil {
			return pkg
		}
	}
	if _, err := h.Sys.LookPath("rpm"); err == nil {
		return rpmOwner(ctx, h, p)
	}
	return nil
}

// dpkgNamesake is the quick answer for the usual case, a runtime installed
// by the package of its own name: `dpkg-query -L NAME` lists PATH, and
// `dpkg-divert --listpackage PATH` names no diversion (a diverted path is
// another package's file). `agentbox run` asks before every launch, and
// `dpkg-query -S`, which searches every package's file list, takes ten
// times longer. nil when it does not settle the question.
func dpkgNamesake(ctx context.Context, h Host, name, p string) *Package {
	if _, err := h.Sys.LookPath("dpkg-divert"); err != nil {
		return nil
	}
	files, err := h.Sys.Output(ctx, "dpkg-query", "-L", name)
	if err != nil || !slices.Contains(strings.Split(string(files), "\n"), p) {
		return nil
	}
	if div, err := h.Sys.Output(ctx, "dpkg-divert", "--listpackage", p); err != nil || strings.TrimSpace(string(div)) != "" {
		return nil
	}
	return dpkgVersion(ctx, h, name)
}

// dpkgVersion is the installed version of package name.
func dpkgVersion(ctx context.Context, h Host, name string) *Package {
	v, err := h.Sys.Output(ctx, "dpkg-query", "-W", "-f", "${Version}", name)
	if err != nil || strings.TrimSpace(string(v)) == "" {
		return nil
	}
	return &Package{Manager: "dpkg", Name: name, Version: strings.TrimSpace(string(v))}
}

// dpkgOwner runs `dpkg-query -S PATH` ("runc: /usr/sbin/runc") and then
// `dpkg-query -W -f '${Version}' PKG`.
func dpkgOwner(ctx context.Context, h Host, p string) *Package {
	out, err := h.Sys.Output(ctx, "dpkg-query", "-S", p)
	if err != nil {
		return nil
	}
	name, _, ok := strings.Cut(strings.TrimSpace(firstLine(string(out))), ": ")
	if !ok || strings.Contains(name, ",") { // "diversion by" lines and shared paths
		return nil
	}
	name, _, _ = strings.Cut(name, ":") // drop ":amd64"
	return dpkgVersion(ctx, h, name)
}

// rpmOwner runs `rpm -qf --qf '%{NAME} %{EPOCH} %{VERSION} %{RELEASE}\n'`.
func rpmOwner(ctx context.Context, h Host, p string) *Package {
	out, err := h.Sys.Output(ctx, "rpm", "-qf", "--qf", `%{NAME} %{EPOCH} %{VERSION} %{RELEASE}\n`, p)
	if err != nil {
		return nil
	}
	f := strings.Fields(firstLine(string(out)))
	if len(f) != 4 {
		return nil
	}
	v := f[2] + "-" + f[3]
	if f[1] != "(none)" && f[1] != "0" {
		v = f[1] + ":" + v
	}
	return &Package{Manager: "rpm", Name: f[0], Version: v}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
