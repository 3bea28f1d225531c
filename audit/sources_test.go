package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/agentbox/agentbox/seccomp"
	"github.com/agentbox/agentbox/seccomp/profiles"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// golden compares got with testdata/golden/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	p := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run go test ./audit -run %s -update)", err, t.Name())
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (-want +got):\n%s", p, diff)
	}
}

// parseFixture reads a captured `docker inspect` of a real container.
func parseFixture(t *testing.T, name string) []Container {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "inspect", name))
	if err != nil {
		t.Fatal(err)
	}
	cs, err := ParseInspect(b, "inspect")
	if err != nil {
		t.Fatal(err)
	}
	for i := range cs {
		cs[i].File = "testdata/inspect/" + name
	}
	return cs
}

func TestInspectFixtures(t *testing.T) {
	tests := []struct {
		file string
		want []string
	}{
		{"faults.json", []string{
			"container-socket-mounted critical", "host-network-mode critical", "privileged-container critical",
			"auto-approve-permission-mode high", "network-policy-not-applied high", "runs-as-root high unknown", "secret-in-environment high",
			"new-privileges-allowed medium", "no-resource-limits medium", "writable-root-filesystem medium",
		}},
		// An inspect file cannot say whether a user network is internal.
		{"hardened.json", []string{"network-policy-not-applied high unknown", "user-namespace-not-used info unknown"}},
		{"weak.json", []string{
			"capabilities-added high", "devices-mounted high", "host-ipc-mode high", "host-pid-mode high",
			"network-policy-not-applied high", "proc-masks-removed high", "runs-as-root high unknown",
			"seccomp-profile-weak high", "apparmor-unconfined medium", "capabilities-not-dropped medium",
			"new-privileges-allowed medium", "no-resource-limits medium", "selinux-unconfined medium",
			"writable-root-filesystem medium", "host-uts-mode low", "sysctls-set low",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			cs := parseFixture(t, tc.file)
			r := Audit(cs, Options{})
			if diff := cmp.Diff(tc.want, codesOf(r.Containers[0].Findings)); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
			var text, js bytes.Buffer
			if err := WriteText(&text, r, false); err != nil {
				t.Fatal(err)
			}
			if err := WriteJSON(&js, r); err != nil {
				t.Fatal(err)
			}
			golden(t, tc.file+".txt", text.Bytes())
			golden(t, tc.file+".report.json", js.Bytes())
		})
	}
}

func TestInspectShapes(t *testing.T) {
	obj := []byte(`{"Id":"abc","Name":"/one","Config":{"User":"","Env":["A=1"],"Entrypoint":"codex --yolo"},"HostConfig":{"NetworkMode":"none"}}`)
	cs, err := ParseInspect(obj, "podman")
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 1 || cs[0].Name != "one" || cs[0].Source != "podman" || !cmp.Equal(cs[0].Argv(), []string{"codex", "--yolo"}) {
		t.Errorf("object: got %+v", cs)
	}
	for _, bad := range []string{``, `null`, `"x"`, `[{}]`, `[1]`, `{"Id":1}`} {
		if _, err := ParseInspect([]byte(bad), "inspect"); err == nil {
			t.Errorf("ParseInspect(%s) succeeded", bad)
		}
	}
}

func TestFromSpec(t *testing.T) {
	mem, pids := int64(1<<30), int64(100)
	s := &specs.Spec{
		Version: "1.2.0",
		Process: &specs.Process{
			User: specs.User{UID: 1000, GID: 1000}, Args: []string{"claude", "--dangerously-skip-permissions"},
			Env: []string{"PATH=/usr/bin", "ANTHROPIC_API_KEY=fake"}, NoNewPrivileges: true,
			Capabilities: &specs.LinuxCapabilities{Bounding: []string{"CAP_SYS_PTRACE"}},
		},
		Root: &specs.Root{Path: "rootfs", Readonly: true},
		Mounts: []specs.Mount{
			{Destination: "/proc", Type: "proc", Source: "proc"},
			{Destination: "/workspace", Type: "bind", Source: "/work/project", Options: []string{"rbind", "rw"}},
			{Destination: "/home/agent/.ssh", Source: "/home/ana/.ssh", Options: []string{"bind", "ro"}},
		},
		Linux: &specs.Linux{
			Namespaces:  []specs.LinuxNamespace{{Type: "pid"}, {Type: "ipc"}, {Type: "uts"}, {Type: "mount"}, {Type: "network", Path: "/run/netns/ab"}, {Type: "user"}},
			UIDMappings: []specs.LinuxIDMapping{{ContainerID: 0, HostID: 100000, Size: 65536}},
			Resources:   &specs.LinuxResources{Memory: &specs.LinuxMemory{Limit: &mem}, Pids: &specs.LinuxPids{Limit: &pids}},
			MaskedPaths: MaskedPaths, ReadonlyPaths: ReadonlyPaths,
			Devices: []specs.LinuxDevice{{Path: "/dev/null", Type: "c"}, {Path: "/dev/kvm", Type: "c"}},
		},
	}
	r := Spec(s, Options{Workspaces: []string{"/work/project"}, AllowEnv: []string{"ANTHROPIC_API_KEY"}})
	want := []string{
		"auto-approve-permission-mode high", "capabilities-added high", "devices-mounted high",
		"home-directory-mounted high", "network-policy-not-applied high unknown", "seccomp-unconfined high",
	}
	if diff := cmp.Diff(want, codesOf(r.Containers[0].Findings)); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
	r = Spec(s, Options{
		Workspaces: []string{"/work/project"}, InternalNetworks: []string{"/run/netns/ab"},
		Accept: acceptAll("test", CodeHomeDirectory, CodeCapsAdded, CodeDevices, CodeSeccompUnconfined, CodeSecretInEnv),
	})
	if u := r.Unaccepted(); len(u) != 0 {
		t.Errorf("unaccepted: %v", codesOf(u))
	}
	if a := r.Accepted(); len(a) != 5 {
		t.Errorf("accepted: %v", codesOf(a))
	}
}

func TestFromSpecHostNamespaces(t *testing.T) {
	c := FromSpec(&specs.Spec{Version: "1.2.0", Process: &specs.Process{}, Linux: &specs.Linux{
		Namespaces: []specs.LinuxNamespace{{Type: "user"}}, UIDMappings: []specs.LinuxIDMapping{{ContainerID: 0, HostID: 0, Size: 1}},
	}}, "x")
	got := []string{c.NetworkMode, c.PidMode, c.IpcMode, c.UTSMode, string(c.UserNS), c.Seccomp.Mode}
	if want := []string{"host", "host", "host", "host", "no", "unconfined"}; !cmp.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestLoadOCIErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "config.json")
	if err := os.WriteFile(bad, []byte("{\n  \"ociVersion\": \"1.2.0\",\n  \"process\": [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadOCI(dir)
	var ie *InputError
	if err == nil || !errors.As(err, &ie) || ie.File != bad {
		t.Fatalf("got %v", err)
	}
	if err := os.WriteFile(bad, []byte(`{"hostname":"x"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadOCI(bad); err == nil {
		t.Error("a JSON without ociVersion loaded as an OCI config")
	}
}

func TestDetect(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	oci := write("bundle/config.json", `{"ociVersion":"1.2.0"}`)
	tests := []struct{ target, kind, path string }{
		{filepath.Join(dir, "bundle"), KindOCI, filepath.Join(dir, "bundle")},
		{oci, KindOCI, oci},
		{write("i.json", `[{"Id":"x"}]`), KindInspect, filepath.Join(dir, "i.json")},
		{write("c.yml", "services: {}"), KindCompose, filepath.Join(dir, "c.yml")},
		{filepath.Dir(write("proj/compose.yaml", "services: {}")), KindCompose, filepath.Join(dir, "proj/compose.yaml")},
		{"my-container", KindContainer, "my-container"},
	}
	for _, tc := range tests {
		kind, p, err := Detect(tc.target)
		if err != nil || kind != tc.kind || p != tc.path {
			t.Errorf("Detect(%s) = %s %s %v, want %s %s", tc.target, kind, p, err, tc.kind, tc.path)
		}
	}
	if _, _, err := Detect(dir); err == nil {
		t.Error("a directory with neither config.json nor compose file was accepted")
	}
	for _, missing := range []string{"compose.yml", "./x", "inspect.json"} {
		if _, _, err := Detect(missing); err == nil {
			t.Errorf("Detect(%s): a missing file was taken for a container name", missing)
		}
	}
}

func TestRecordAndLabbook(t *testing.T) {
	r := Audit(parseFixture(t, "faults.json"), Options{})
	p := filepath.Join(t.TempDir(), "lab.jsonl")
	for range 2 {
		if err := AppendRecord(p, r); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
	if len(lines) != 2 {
		t.Fatalf("want 2 lines, got %d", len(lines))
	}
	var back Report
	if err := json.Unmarshal(lines[1], &back); err != nil {
		t.Fatal(err)
	}
	if !cmp.Equal(codesOf(back.Unaccepted()), codesOf(r.Unaccepted())) {
		t.Error("the record does not round-trip")
	}
}

func TestSpecSeccompAgainstAgentboxProfile(t *testing.T) {
	own, err := profiles.Default().NativeOCI()
	if err != nil {
		t.Fatal(err)
	}
	s := &specs.Spec{Version: "1.2.0", Process: &specs.Process{}, Linux: &specs.Linux{Seccomp: own}}
	if got := FromSpec(s, "x").Seccomp; got.Mode != "custom" || !got.WeakKnown || len(got.Weak) != 0 {
		t.Errorf("agentbox's own profile: %+v", got)
	}
	s.Linux.Seccomp = &specs.LinuxSeccomp{DefaultAction: specs.ActAllow}
	if got := FromSpec(s, "x").Seccomp; len(got.Weak) == 0 {
		t.Errorf("an allow-all profile is not weak: %+v", got)
	}
}

// crun loads the filter of run.oci.seccomp_bpf_data in place of the
// seccomp section: a spec whose annotation is the section's own compile
// (agentbox's bundles for crun) is judged by its section, and any other
// program is a filter the audit cannot judge, however strict the section.
func TestSpecSeccompRawFilterForCrun(t *testing.T) {
	own, err := profiles.Default().NativeOCI()
	if err != nil {
		t.Fatal(err)
	}
	ownBPF, err := seccomp.CrunBPF(own)
	if err != nil {
		t.Fatal(err)
	}
	allowAll, err := seccomp.CrunBPF(&specs.LinuxSeccomp{DefaultAction: specs.ActAllow})
	if err != nil {
		t.Fatal(err)
	}
	spec := func(sc *specs.LinuxSeccomp, raw string) *specs.Spec {
		return &specs.Spec{Version: "1.2.0", Process: &specs.Process{}, Annotations: map[string]string{seccomp.CrunBPFAnnotation: raw}, Linux: &specs.Linux{Seccomp: sc}}
	}
	if got := FromSpec(spec(own, ownBPF), "x").Seccomp; got.Mode != "custom" || got.Error != "" || !got.WeakKnown || len(got.Weak) != 0 {
		t.Errorf("the section's own compile: %+v, want the section judged", got)
	}
	for name, s := range map[string]*specs.Spec{
		"an allow-all program beside agentbox's section": spec(own, allowAll),
		"a program that is not BPF":                      spec(own, "not base64"),
		"a program and no section":                       spec(nil, ownBPF),
	} {
		c := FromSpec(s, "x")
		fs := checkSeccomp(&c, &Options{})
		if len(fs) != 1 || fs[0].Code != CodeSeccompWeak || !fs[0].Unknown || !strings.Contains(fs[0].Detail, seccomp.CrunBPFAnnotation) && !strings.Contains(fs[0].Subject, seccomp.CrunBPFAnnotation) {
			t.Errorf("%s: findings %+v, want one %s that cannot be judged, naming the annotation", name, fs, CodeSeccompWeak)
		}
	}
}
