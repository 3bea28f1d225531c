package selftest

import (
	"strings"
	"testing"
)

func TestDecideKernel(t *testing.T) {
	host := "6.1.0-28-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.119-1"
	k := KernelPlan{HostRelease: Digest([]byte(host)), HostLandlockABI: 7}
	g := k
	g.GVisor = true
	for _, tc := range []struct {
		name    string
		k       KernelPlan
		release string
		llErr   string
		want    Decision
		obs     string
	}{
		{"runc on the host kernel", k, host, "", Deny, "host-kernel"},
		{"runc finds another kernel", k, "4.4.0 #1", "ENOSYS", Allow, "other-kernel"},
		{"gVisor: the Sentry answers", g, "4.19.0-gvisor #1", "EOPNOTSUPP", Deny, "sentry"},
		{"gVisor planned, the host kernel answers", g, host, "", Allow, "host-kernel"},
		{"gVisor planned, Landlock answered", g, "4.19.0-gvisor #1", "", Allow, "landlock-answered"},
	} {
		d, o, _ := decideKernel(tc.k, tc.release, tc.llErr)
		if d != tc.want || o != tc.obs {
			t.Errorf("%s: %s %s, want %s %s", tc.name, d, o, tc.want, tc.obs)
		}
	}
}

func TestDecideSentryCmdline(t *testing.T) {
	k := KernelPlan{GVisor: true, HostCmdline: Digest([]byte("BOOT_IMAGE=/vmlinuz root=/dev/vda1\n"))}
	if d, _ := decideSentryCmdline(k, []byte("BOOT_IMAGE=/vmlinuz root=/dev/vda1\n")); d != Allow {
		t.Errorf("the host's cmdline: %s, want ALLOW", d)
	}
	if d, o := decideSentryCmdline(k, []byte("BOOT_IMAGE=/vmlinuz-4.4.0-gvisor quiet\n")); d != Deny || o != "sentry-own" {
		t.Errorf("the Sentry's cmdline: %s %s, want DENY sentry-own", d, o)
	}
	if d, _ := decideSentryCmdline(KernelPlan{GVisor: true}, []byte("x")); d != Unknown {
		t.Errorf("no host digest: %s, want UNKNOWN", d)
	}
}

func TestDecideSentryCapabilities(t *testing.T) {
	st := func(eff, amb string) map[string]string {
		return map[string]string{"CapEff": eff, "CapPrm": eff, "CapBnd": eff, "CapAmb": amb}
	}
	for _, tc := range []struct {
		name     string
		st       map[string]string
		mapD     Decision
		want     Decision
		observed string
	}{
		{"runsc's set in a mapped namespace", st("000000000008001f", "0"), Deny, Deny, "sentry-userns:CapEff=000000000008001f,CapPrm=000000000008001f"},
		{"none", st("0", "0"), Deny, Deny, "none"},
		{"CAP_SYS_ADMIN is beyond the Sentry's", st("000000000020001f", "0"), Deny, Allow, "beyond-sentry:CapEff=000000000020001f"},
		{"ambient", st("0", "0000000000000001"), Deny, Allow, "beyond-sentry:CapAmb=0000000000000001"},
		{"identity map", st("000000000008001f", "0"), Allow, Allow, "sentry-caps-with-identity"},
		{"missing line", map[string]string{"CapEff": "0"}, Deny, Unknown, "CapPrm-missing"},
	} {
		o := "identity"
		d, got := decideSentryCapabilities(tc.st, tc.mapD, o)
		if d != tc.want || got != tc.observed {
			t.Errorf("%s: %s %s, want %s %s", tc.name, d, got, tc.want, tc.observed)
		}
	}
}

func TestSentrySubstitute(t *testing.T) {
	inside := []Result{
		{Probe: "uid-map-non-identity", Decision: Allow, Observed: "identity"},
		{Probe: "ptrace-pid1-denied", Decision: Deny, Observed: "EPERM"},
		{Probe: "prlimit-pid1-denied", Decision: Deny, Observed: "EPERM"},
		{Probe: "kill-pid1-denied", Decision: Deny, Observed: "EPERM"},
	}
	host := []Result{
		{Probe: "host-uid-map", Decision: Deny, Observed: "mapped"},
		{Probe: "host-init-uid-separate", Decision: Allow, Observed: "shared:231072"},
	}
	SentrySubstitute(inside, host)
	if r := inside[0]; r.Decision != Deny || r.Observed != "gvisor:host-uid-map=mapped" || !strings.Contains(r.Detail, "Sentry") {
		t.Errorf("uid-map-non-identity: %+v", r)
	}
	if r := host[1]; r.Decision != Deny || !strings.HasPrefix(r.Observed, "gvisor:ptrace-pid1-denied=EPERM") {
		t.Errorf("host-init-uid-separate: %+v", r)
	}

	// A substitute that failed or is missing never passes.
	inside[3].Decision = Allow
	host[0].Decision = Unknown
	SentrySubstitute(inside, host)
	if inside[0].Decision != Unknown || host[1].Decision != Allow {
		t.Errorf("failed substitutes: uid-map %s, init-uid %s; want UNKNOWN, ALLOW", inside[0].Decision, host[1].Decision)
	}
	only := []Result{{Probe: "uid-map-non-identity", Decision: Allow}}
	SentrySubstitute(only, nil)
	if only[0].Decision != Unknown {
		t.Errorf("without host-uid-map: %s, want UNKNOWN", only[0].Decision)
	}
}
