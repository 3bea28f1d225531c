package compose

import (
	"debug/elf"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/types"
	"github.com/google/go-cmp/cmp"

	"github.com/agentbox/agentbox/netpolicy"
	"github.com/agentbox/agentbox/policy"
)

func TestRenderGolden(t *testing.T) {
	for _, tc := range []struct {
		name    string
		command []string
		lsm     policy.LSMKind
	}{
		{"codex", []string{"codex"}, policy.LSMNone},
		{"claude", []string{"claude"}, policy.LSMAppArmor},
		{"command", []string{"sh", "-c", "make test"}, policy.LSMNone},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan := testPlan("/work/project")
			if tc.lsm == policy.LSMAppArmor {
				plan.LSM = policy.LSM{Kind: policy.LSMAppArmor, AppArmorProfile: policy.AppArmorProfile}
				plan.Residuals = nil
			}
			out, err := Render(plan, testOptions("/work/project", tc.command...))
			if err != nil {
				t.Fatal(err)
			}
			golden(t, tc.name+".compose.yaml", out.File(ComposeFile).Data)
			golden(t, tc.name+".gateway.yaml", out.File(GatewayFile).Data)
			var files strings.Builder
			for _, f := range out.Files {
				fmt.Fprintf(&files, "%s %v secret=%v\n", f.Name, f.Mode, f.Secret)
			}
			fmt.Fprintf(&files, "image %s\nagent %s, permission %s\n", out.GatewayImage, out.Agent, out.Permission.Mode)
			for _, n := range out.Notes {
				fmt.Fprintf(&files, "note: %s\n", n)
			}
			golden(t, tc.name+".files", []byte(files.String()))
		})
	}
}

// TestRenderAgentService checks the hardening of the agent service field by
// field, independently of the golden files.
func TestRenderAgentService(t *testing.T) {
	out, err := Render(testPlan("/work/project"), testOptions("/work/project", "codex"))
	if err != nil {
		t.Fatal(err)
	}
	a := out.Project.Services[AgentService]
	if !a.ReadOnly || a.User != "1000:1000" || !slices.Equal(a.CapDrop, []string{"ALL"}) {
		t.Errorf("read_only=%v user=%q cap_drop=%v", a.ReadOnly, a.User, a.CapDrop)
	}
	wantOpts := []string{"no-new-privileges:true", "seccomp=/work/project/agentbox-compose/" + SeccompFile}
	if d := cmp.Diff(wantOpts, a.SecurityOpt); d != "" {
		t.Errorf("security_opt (-want +got):\n%s", d)
	}
	if a.MemLimit != 4<<30 || a.MemSwapLimit != 4<<30 || a.PidsLimit != 512 || a.CPUShares != 1024 {
		t.Errorf("limits: mem %d swap %d pids %d shares %d", a.MemLimit, a.MemSwapLimit, a.PidsLimit, a.CPUShares)
	}
	if d := cmp.Diff([]types.ServiceVolumeConfig{{Type: "bind", Source: "/work/project", Target: "/work/project"}}, a.Volumes); d != "" {
		t.Errorf("volumes: only the workspace (-want +got):\n%s", d)
	}
	wantTmpfs := []string{
		"/home/agent:nosuid,nodev,exec,mode=0700,uid=1000,gid=1000",
		"/tmp:nosuid,nodev,exec,mode=1777",
		"/work/project/agentbox-compose:ro,nosuid,nodev,noexec,size=4k,mode=0555",
	}
	if d := cmp.Diff(wantTmpfs, []string(a.Tmpfs)); d != "" {
		t.Errorf("tmpfs (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{SandboxNetwork}, keys(a.Networks)); d != "" {
		t.Errorf("networks (-want +got):\n%s", d)
	}
	if g := out.Project.Services[GatewayService]; !slices.Equal(keys(g.Networks), []string{EgressNetwork, SandboxNetwork}) {
		t.Errorf("gateway networks: %v", keys(g.Networks))
	}
	if !out.Project.Networks[SandboxNetwork].Internal || out.Project.Networks[EgressNetwork].Internal {
		t.Errorf("networks: %+v", out.Project.Networks)
	}
}

// TestRenderEnvironment: the agent's environment holds the gateway key only
// under the names the lab's audit allows (AGENT_GATEWAY_KEY, OPENAI_API_KEY,
// ANTHROPIC_AUTH_TOKEN), never a real key; codex reads it from
// OPENAI_API_KEY; allowlisted names pass through without a value; the
// gateway gets only the token.
func TestRenderEnvironment(t *testing.T) {
	for _, tc := range []struct {
		command  []string
		keyNames []string
	}{
		{[]string{"codex"}, []string{KeyEnv, "OPENAI_API_KEY"}},
		{[]string{"claude"}, []string{KeyEnv, "ANTHROPIC_AUTH_TOKEN"}},
		{[]string{"sh"}, []string{KeyEnv, "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY"}},
	} {
		plan := testPlan("/work/project")
		plan.Env = append(plan.Env, "OPENAI_API_KEY=sk-real-key-from-the-launcher")
		out, err := Render(plan, testOptions("/work/project", tc.command...))
		if err != nil {
			t.Fatal(err)
		}
		env := out.Project.Services[AgentService].Environment
		var withToken []string
		for k, v := range env {
			switch {
			case v == nil:
				if k != "TERM" && k != "LANG" && k != "OPENAI_API_KEY" {
					t.Errorf("%v: %s passes through", tc.command, k)
				}
			case *v == testToken:
				withToken = append(withToken, k)
			case strings.Contains(*v, "sk-"):
				t.Errorf("%v: %s carries a real key", tc.command, k)
			}
		}
		slices.Sort(withToken)
		if d := cmp.Diff(tc.keyNames, withToken); d != "" {
			t.Errorf("%v: variables carrying the gateway key (-want +got):\n%s", tc.command, d)
		}
		argv := strings.Join(out.Project.Services[AgentService].Command, " ")
		if tc.command[0] == "codex" && !strings.Contains(argv, `model_providers.agentbox.env_key="OPENAI_API_KEY"`) {
			t.Errorf("codex does not read its key from OPENAI_API_KEY: %s", argv)
		}
		if strings.Contains(argv, "AGENTBOX_GATEWAY_TOKEN") {
			t.Errorf("%v: the command still names AGENTBOX_GATEWAY_TOKEN: %s", tc.command, argv)
		}
		if v := env["NO_PROXY"]; v == nil || !strings.HasPrefix(*v, GatewayService+",") {
			t.Errorf("%v: NO_PROXY does not skip the gateway: %v", tc.command, v)
		}
		if v := env["HOME"]; v == nil || *v != "/home/agent" {
			t.Errorf("%v: HOME = %v", tc.command, v)
		}
		if d := cmp.Diff(types.MappingWithEquals{KeyEnv: ptr(testToken)}, out.Project.Services[GatewayService].Environment); d != "" {
			t.Errorf("%v: gateway environment (-want +got):\n%s", tc.command, d)
		}
	}
}

func TestRenderMounts(t *testing.T) {
	plan := testPlan("/work/project")
	plan.Mounts = append(plan.Mounts,
		policy.Mount{Kind: policy.KindExtra, Source: "/srv/docs", Destination: "/srv/docs", ReadOnly: true},
		policy.Mount{Kind: policy.KindRuntime, Source: "/run/agentbox/init", Destination: policy.InitPath, ReadOnly: true})
	opts := testOptions("/work/project", "codex")
	opts.OutDir = "/srv/docs/box"
	out, err := Render(plan, opts)
	if err != nil {
		t.Fatal(err)
	}
	a := out.Project.Services[AgentService]
	want := []types.ServiceVolumeConfig{
		{Type: "bind", Source: "/work/project", Target: "/work/project"},
		{Type: "bind", Source: "/srv/docs", Target: "/srv/docs", ReadOnly: true},
	}
	if d := cmp.Diff(want, a.Volumes); d != "" {
		t.Errorf("volumes (-want +got):\n%s", d)
	}
	if last := a.Tmpfs[len(a.Tmpfs)-1]; !strings.HasPrefix(last, "/srv/docs/box:ro,") {
		t.Errorf("an output directory inside a read-only bind is not hidden: %v", a.Tmpfs)
	}
	opts.OutDir = "/var/lib/boxes/project"
	out, err = Render(plan, opts)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(out.Project.Services[AgentService].Tmpfs); n != 2 {
		t.Errorf("an output directory outside every bind is masked: %v", out.Project.Services[AgentService].Tmpfs)
	}
}

func TestRenderBadInput(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*policy.Plan, *Options)
		want   string
	}{
		{"no image", func(_ *policy.Plan, o *Options) { o.Image = " " }, "--image"},
		{"no command", func(_ *policy.Plan, o *Options) { o.Command = nil }, "no agent and no command"},
		{"not a token", func(_ *policy.Plan, o *Options) { o.Token = "sk-real-key" }, "not a gateway token"},
		{"relative out", func(_ *policy.Plan, o *Options) { o.OutDir = "agentbox-compose" }, "not an absolute path"},
		{"out is the workspace", func(_ *policy.Plan, o *Options) { o.OutDir = "/work/project" }, "holds the workspace"},
		{"out above the workspace", func(_ *policy.Plan, o *Options) { o.OutDir = "/work" }, "holds the workspace"},
		{"rootfs", func(p *policy.Plan, _ *Options) { p.Rootfs.Image = "/srv/root" }, "unpacked root"},
		{"no CA bundle", func(_ *policy.Plan, o *Options) { o.CABundle = nil }, "CA certificates"},
		{"not ELF", func(_ *policy.Plan, o *Options) { o.GatewayBinary = []byte("#!/bin/sh\n") }, "not an ELF"},
		{"other arch", func(_ *policy.Plan, o *Options) { o.GatewayBinary = fakeELF(elf.EM_AARCH64, false) }, "built for EM_AARCH64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan, opts := testPlan("/work/project"), testOptions("/work/project", "codex")
			tc.change(plan, &opts)
			_, err := Render(plan, opts)
			var in *InputError
			if !errors.As(err, &in) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want an *InputError about %q", err, tc.want)
			}
		})
	}
	plan, opts := testPlan("/work/project"), testOptions("/work/project", "codex")
	opts.GatewayBinary = fakeELF(elf.EM_X86_64, true)
	if _, err := Render(plan, opts); !errors.Is(err, ErrNotStatic) {
		t.Errorf("dynamic binary: err = %v, want ErrNotStatic", err)
	}
	if _, err := AgentCommand("gemini"); err == nil || !strings.Contains(err.Error(), "claude, codex") {
		t.Errorf("unknown agent: %v", err)
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestRenderGatewayPolicy: the policy's allowlist and model routes reach the
// gateway's config; every route with a key gets a secret; a loopback URL
// gets a note, a host CA file is refused.
func TestRenderGatewayPolicy(t *testing.T) {
	plan := testPlan("/work/project")
	plan.Network.Allow = []string{"registry.npmjs.org:443"}
	plan.Gateway.Upstreams = map[string]policy.Upstream{
		"local":  {URL: "http://127.0.0.1:11434/v1", KeyEnv: "LOCAL_KEY", Models: []string{"qwen"}},
		"lan":    {URL: "http://192.0.2.10:8000/v1"},
		"openai": {Models: []string{"gpt-5"}},
	}
	out, err := Render(plan, testOptions("/work/project", "claude"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := netpolicy.ParseConfig(GatewayFile, out.File(GatewayFile).Data)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]netpolicy.Upstream{
		"anthropic": {KeyFile: "/run/secrets/anthropic_api_key"},
		"lan":       {URL: "http://192.0.2.10:8000/v1"},
		"local":     {URL: "http://127.0.0.1:11434/v1", KeyFile: "/run/secrets/local_api_key", Models: []string{"qwen"}},
		"openai":    {KeyFile: "/run/secrets/openai_api_key", Models: []string{"gpt-5"}},
	}
	if d := cmp.Diff(want, cfg.Upstreams); d != "" {
		t.Errorf("upstreams (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"registry.npmjs.org:443"}, cfg.Allow); d != "" {
		t.Errorf("allow (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"anthropic_api_key", "local_api_key", "openai_api_key"}, keys(out.Project.Secrets)); d != "" {
		t.Errorf("secrets (-want +got):\n%s", d)
	}
	if n := len(out.Project.Services[GatewayService].Secrets); n != 3 {
		t.Errorf("the gateway gets %d secrets, want 3", n)
	}
	if len(out.Project.Services[AgentService].Secrets) != 0 {
		t.Error("the agent gets a secret")
	}
	if !slices.ContainsFunc(out.Notes, func(n string) bool { return strings.Contains(n, "the local route points at http://127.0.0.1") }) {
		t.Errorf("no note on the loopback route: %v", out.Notes)
	}
	plan.Gateway.Upstreams["lan"] = policy.Upstream{URL: "https://lan.example/v1", CAFile: "/etc/lan-ca.pem"}
	var in *InputError
	if _, err := Render(plan, testOptions("/work/project", "claude")); !errors.As(err, &in) || !strings.Contains(err.Error(), "ca_file") {
		t.Errorf("ca_file: err = %v, want an *InputError", err)
	}
}
