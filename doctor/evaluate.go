package doctor

import (
	"fmt"
	"slices"
	"strings"
)

// HostSummary names the host a report is about.
type HostSummary struct {
	OS     string `json:"os"`
	Kernel string `json:"kernel"`
	User   string `json:"user"`
	EUID   int    `json:"euid"`
}

// Evaluate runs every check over f and turns the results into a report.
func Evaluate(f *Facts) Report {
	var rs []Result
	for _, c := range Checks() {
		rs = append(rs, c.Run(f)...)
	}
	rep := Report{
		Host:      HostSummary{OS: f.OS.Pretty, Kernel: f.Kernel, User: f.User.Name, EUID: f.User.EUID},
		Checks:    rs,
		Layers:    layers(rs),
		Residuals: residuals(rs),
		Modes:     runtimeModes(f),
		Probes:    f.SelfTest.Result.Probes,
	}
	rep.Verdict = verdict(rs, rep.Residuals)
	return rep
}

// layerLead is the result whose detail describes a layer that holds.
var layerLead = map[string]string{
	LayerUserNS: "subids", LayerSeccomp: "seccomp", LayerMAC: "mac",
	LayerLimits: "cgroup", LayerRuntime: "runtime-default", LayerSelfTest: "selftest",
	LayerDarwinUser: "darwin-pf-anchors",
}

func layers(rs []Result) []Layer {
	var out []Layer
	for _, name := range layerOrder {
		if name == LayerDarwinUser && !slices.ContainsFunc(rs, func(r Result) bool { return r.Layer == name }) {
			continue // a Mac's only
		}
		l := Layer{Name: name, Holds: true}
		var blocking, weak []string
		for _, r := range rs {
			switch {
			case r.Layer != name:
				continue
			case r.Blocks():
				blocking = append(blocking, r.ID+" "+string(r.Status))
			case r.Status == Warn:
				weak = append(weak, r.ID)
			}
			if r.ID == layerLead[name] || l.Detail == "" && strings.HasPrefix(r.ID, "runtime-") {
				l.Detail = r.Detail
			}
		}
		switch {
		case len(blocking) > 0:
			l.Holds, l.Detail = false, "blocked by "+strings.Join(blocking, ", ")
		case len(weak) > 0 && !contains(weak, layerLead[name]):
			l.Detail += "; with residuals " + strings.Join(weak, ", ")
		}
		out = append(out, l)
	}
	return out
}

func residuals(rs []Result) []Residual {
	out := []Residual{}
	for _, r := range rs {
		if r.Status == Warn && r.Layer != "" {
			out = append(out, Residual{Code: r.residualCode(), Detail: r.Detail})
		}
	}
	return out
}

func verdict(rs []Result, res []Residual) Verdict {
	var blocking []string
	for _, r := range rs {
		if r.Blocks() {
			blocking = append(blocking, r.ID)
		}
	}
	switch {
	case len(blocking) > 0:
		return Verdict{
			Status: VerdictCannot, Blocking: blocking,
			Summary: fmt.Sprintf("this host cannot provide agentbox's boundary: %d check(s) fail or cannot be decided (%s)", len(blocking), strings.Join(blocking, ", ")),
		}
	case len(res) > 0:
		var codes []string
		for _, r := range res {
			codes = append(codes, r.Code)
		}
		return Verdict{Status: VerdictResiduals, Summary: fmt.Sprintf("the boundary holds on this host with %d accepted residual(s): %s", len(res), strings.Join(codes, ", "))}
	}
	return Verdict{Status: VerdictOK, Summary: "every layer of the boundary holds on this host"}
}
