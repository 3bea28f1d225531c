package doctor

import (
	"fmt"

	"github.com/agentbox/agentbox/engine/advisory"
)

// runModes are the ways `agentbox run` launches as this user that the
// advisory table tells apart: the default root, then --rootfs. Every
// agentbox sandbox has a user namespace that does not map host root.
func runModes(f *Facts) []advisory.Mode {
	def := advisory.Mode{UserNS: true, Rootless: f.User.Rootless()}
	rootfs := def
	rootfs.Rootfs = true
	return []advisory.Mode{def, rootfs}
}

// verdictRuntime is the runtime doctor's verdict is about, the one a
// policy without runtime: uses: runc, or else the first one found (which
// checkRuntimes tells the user to name).
func verdictRuntime(f *Facts) string {
	for _, rt := range f.Runtimes {
		if rt.Name == f.defaultRuntime() {
			return rt.Name
		}
	}
	if len(f.Runtimes) > 0 {
		return f.Runtimes[0].Name
	}
	return ""
}

// judgeRuntimes runs the advisory judgement, the same one `agentbox run`
// applies, for every installed runtime in every mode: [runtime][mode].
func judgeRuntimes(f *Facts) ([][][]advisory.Finding, error) {
	t, err := advisory.Load()
	if err != nil {
		return nil, err
	}
	out := make([][][]advisory.Finding, len(f.Runtimes))
	for i, rt := range f.Runtimes {
		for _, m := range runModes(f) {
			out[i] = append(out[i], advisory.Judge(t, rt.Advisory(), f.OS.Distro(), m))
		}
	}
	return out, nil
}

// checkRuntimeCVEs reports every entry of the advisory table for every
// installed runtime as agentbox run would judge it with the default root;
// the --rootfs verdict, where it differs, is in the detail and in
// Report.Modes. Only the verdict runtime's results decide the runtime
// layer: another runtime's blocking result is a WARN naming what run does
// with it.
func checkRuntimeCVEs(f *Facts) []Result {
	judged, err := judgeRuntimes(f)
	if err != nil {
		return []Result{{ID: "runtime-cves", Status: Unknown, Layer: LayerRuntime, Detail: "cannot read the advisory table: " + err.Error(), Fix: "rebuild agentbox from a clean checkout"}}
	}
	var out []Result
	for i, rt := range f.Runtimes {
		def, rootfs := judged[i][0], judged[i][1]
		for j := range def {
			out = append(out, cveResult(def[j], rootfs[j], rt.Name == verdictRuntime(f)))
		}
	}
	return out
}

// cveResult is one finding of the default mode as a check result.
func cveResult(def, rootfs advisory.Finding, decides bool) Result {
	r := Result{ID: def.Key, Layer: LayerRuntime, Detail: describeFinding(def, rootfs), Fix: def.Fix}
	switch {
	case def.Verdict == advisory.Fixed || def.Verdict == advisory.NotAffected:
		r.Status = Pass
	case def.Residual():
		r.Status = Warn
	case def.Verdict == advisory.Exposed:
		r.Status = Fail
	default:
		r.Status = Unknown
	}
	if !decides {
		r.Layer = ""
		if r.Blocks() {
			r.Status = Warn
			r.Detail = fmt.Sprintf("%s is not the runtime agentbox uses by default; with runtime: %s, agentbox run refuses for this: %s", def.Runtime, def.Runtime, r.Detail)
		}
	}
	return r
}

// describeFinding is the detail of a CVE check: the version facts, the
// exposure in the default mode, the source, and --rootfs's verdict when it
// differs.
func describeFinding(def, rootfs advisory.Finding) string {
	s := def.Detail
	if def.Exposure != "" {
		s += "; " + def.Exposure
	}
	if def.Verdict != advisory.Fixed && def.Verdict != advisory.NotAffected {
		s += " — " + def.Source
	}
	if def.Soft() && def.Verdict != advisory.Fixed && def.Verdict != advisory.NotAffected {
		s = def.Severity + " severity: " + s
	}
	if rootfs.Verdict != def.Verdict {
		s += fmt.Sprintf("; with --rootfs: %s", rootfs.Verdict)
	}
	return s
}
