package audit

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentbox/agentbox/policy"
	"github.com/agentbox/agentbox/spec"
)

// hardened is a model that every check passes.
func hardened() Container {
	return Container{
		Name: "h", Source: "test", User: "1000:1000", UserNS: Yes, CapsKnown: true,
		NoNewPrivileges: Yes, ReadOnlyRoot: true, NetworkMode: "private",
		Seccomp: Seccomp{Mode: "default"}, MemoryLimit: 1 << 30, PidsLimit: 128,
		Mounts: []Mount{{Type: "bind", Source: "/work/project", Destination: "/workspace"}},
	}
}

func codesOf(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		s := f.Code + " " + string(f.Severity)
		if f.Unknown {
			s += " unknown"
		}
		if f.Accepted {
			s += " accepted"
		}
		out = append(out, s)
	}
	return out
}

func TestChecks(t *testing.T) {
	opts := Options{Workspaces: []string{"/work/project"}, HomeDirs: []string{"/srv/users/ana"}}
	tests := []struct {
		name   string
		change func(c *Container)
		opts   *Options
		want   []string
	}{
		{"hardened is clean", func(c *Container) {}, nil, nil},
		{
			"privileged hides the caps it implies", func(c *Container) { c.Privileged, c.Caps = true, AllCaps }, nil,
			[]string{"privileged-container critical"},
		},
		{
			"root without userns", func(c *Container) { c.User, c.UserNS = "root", No }, nil,
			[]string{"runs-as-root high"},
		},
		{"root with userns is fine", func(c *Container) { c.User = "0:0" }, nil, nil},
		{
			"non-root without userns is a note", func(c *Container) { c.UserNS = No }, nil,
			[]string{"user-namespace-not-used info"},
		},
		{
			"unknown userns for root is unknown", func(c *Container) { c.User, c.UserNS = "", Unknown }, nil,
			[]string{"runs-as-root high unknown"},
		},
		{
			"caps added and kept", func(c *Container) { c.Caps = []string{"CAP_SYS_ADMIN", "CAP_CHOWN"} }, nil,
			[]string{"capabilities-added high", "capabilities-not-dropped medium"},
		},
		{
			"caps unknown", func(c *Container) { c.CapsKnown = false }, nil,
			[]string{"capabilities-not-dropped medium unknown"},
		},
		{"writable root, new privileges, no limits", func(c *Container) {
			c.ReadOnlyRoot, c.NoNewPrivileges, c.MemoryLimit = false, No, 0
		}, nil, []string{"new-privileges-allowed medium", "no-resource-limits medium", "writable-root-filesystem medium"}},
		{
			"seccomp unconfined", func(c *Container) { c.Seccomp.Mode = "unconfined" }, nil,
			[]string{"seccomp-unconfined high"},
		},
		{
			"seccomp weak", func(c *Container) { c.Seccomp = Seccomp{Mode: "custom", Weak: []string{"bpf"}, WeakKnown: true} }, nil,
			[]string{"seccomp-profile-weak high"},
		},
		{
			"seccomp custom, not compared", func(c *Container) { c.Seccomp = Seccomp{Mode: "custom"} }, nil,
			[]string{"seccomp-profile-weak high unknown"},
		},
		{"seccomp custom, as strong", func(c *Container) { c.Seccomp = Seccomp{Mode: "custom", WeakKnown: true} }, nil, nil},
		{
			"lsm off", func(c *Container) { c.AppArmor, c.SELinux = "unconfined", []string{"disable"} }, nil,
			[]string{"apparmor-unconfined medium", "selinux-unconfined medium"},
		},
		{
			"selinux spc_t", func(c *Container) { c.SELinux = []string{"system_u:system_r:spc_t:s0"} }, nil,
			[]string{"selinux-unconfined medium"},
		},
		{
			"systempaths unconfined", func(c *Container) { c.SystemPaths = "unconfined" }, nil,
			[]string{"proc-masks-removed high"},
		},
		{
			"masked paths emptied", func(c *Container) { c.PathsKnown, c.ProcMounted = true, true }, nil,
			[]string{"proc-masks-removed high"},
		},
		{"masked paths complete", func(c *Container) {
			c.PathsKnown, c.ProcMounted, c.MaskedPaths, c.ReadonlyPaths = true, true, MaskedPaths, ReadonlyPaths
		}, nil, nil},
		{
			"host namespaces", func(c *Container) { c.PidMode, c.IpcMode, c.UTSMode = "host", "host", "host" }, nil,
			[]string{"host-ipc-mode high", "host-pid-mode high", "host-uts-mode low"},
		},
		{"devices and sysctls", func(c *Container) {
			c.Devices, c.DeviceRules, c.Sysctls = []Device{{Host: "/dev/kvm"}}, []string{"c 10:* rwm"}, map[string]string{"net.ipv4.ip_forward": "1"}
		}, nil, []string{"devices-mounted high", "devices-mounted high", "sysctls-set low"}},
		{"host network", func(c *Container) { c.NetworkMode = "host" }, nil, []string{"host-network-mode critical", "network-policy-not-applied high"}},
		{"default bridge", func(c *Container) { c.NetworkMode = "bridge" }, nil, []string{"network-policy-not-applied high"}},
		{"networks internal, not, unknown", func(c *Container) {
			c.NetworkMode, c.Networks = "", []Network{{Name: "a", Internal: Yes}, {Name: "b", Internal: No}, {Name: "c", Internal: Unknown}}
		}, nil, []string{"network-policy-not-applied high", "network-policy-not-applied high unknown"}},
		{
			"vouched network", func(c *Container) { c.NetworkMode, c.Networks = "", []Network{{Name: "gw", Internal: Unknown}} },
			&Options{InternalNetworks: []string{"gw"}, Workspaces: []string{"/work/project"}}, nil,
		},
		{
			"joined netns is unknown", func(c *Container) { c.NetworkMode = "ns:/run/netns/x" }, nil,
			[]string{"network-policy-not-applied high unknown"},
		},
		{
			"the caller's init keeps its children's caps as a note", withInit, &initOpts,
			[]string{"init-capabilities info"},
		},
		{
			"init caps without the caller saying so", withInit, nil,
			[]string{"capabilities-not-dropped medium"},
		},
		{
			"init caps beyond the declared ones", func(c *Container) { withInit(c); c.Caps = append(c.Caps, "CAP_SYS_ADMIN") }, &initOpts,
			[]string{"capabilities-added high", "init-capabilities info"},
		},
		{
			"init caps that survive exec", func(c *Container) { withInit(c); c.CapsInherited = []string{"CAP_SETUID"} }, &initOpts,
			[]string{"capabilities-not-dropped medium", "init-capabilities info"},
		},
		{
			"another process with init's caps", func(c *Container) { withInit(c); c.Command = []string{"/bin/sh"} }, &initOpts,
			[]string{"capabilities-not-dropped medium"},
		},
		{
			"init bound read-write", func(c *Container) { withInit(c); c.Mounts[1].ReadOnly = false }, &initOpts,
			[]string{"system-directory-mounted high", "capabilities-not-dropped medium"},
		},
		{
			"auto-approve alone is a note", func(c *Container) { c.Command = []string{"claude", "--dangerously-skip-permissions"} }, nil,
			[]string{"auto-approve-permission-mode info"},
		},
		{"auto-approve with a fault is raised", func(c *Container) {
			c.Command, c.NetworkMode = []string{"codex", "--yolo"}, "host"
		}, nil, []string{"host-network-mode critical", "auto-approve-permission-mode high", "network-policy-not-applied high"}},
		{
			"accepted fault does not raise auto-approve", func(c *Container) {
				c.Command, c.NetworkMode = []string{"codex", "--yolo"}, "host"
			}, &Options{Accept: []policy.Acceptance{{Code: CodeHostNetwork, Reason: "lab machine"}, {Code: CodeNetworkPolicy, Reason: "lab machine"}}, Workspaces: []string{"/work/project"}},
			[]string{"host-network-mode critical accepted", "network-policy-not-applied high accepted", "auto-approve-permission-mode info"},
		},
		{
			// The review's confirmed bug: an accepted extra-writable-mount
			// plus an auto-approve setting refused the launch.
			"fault accepted for its subject does not raise auto-approve", func(c *Container) {
				c.Command = []string{"codex", "--full-auto"}
				c.Mounts = append(c.Mounts, Mount{Type: "bind", Source: "/srv/cache", Destination: "/srv/cache"})
			}, &Options{Accept: []policy.Acceptance{{Code: CodeExtraWritable, Subject: "/srv/cache", Reason: "build cache"}}, Workspaces: []string{"/work/project"}},
			[]string{"extra-writable-mount medium accepted", "auto-approve-permission-mode info"},
		},
		{
			"a substring subject accepts nothing", func(c *Container) {
				c.Mounts = append(c.Mounts, Mount{Type: "bind", Source: "/srv/cache-keys", Destination: "/k"})
			}, &Options{Accept: []policy.Acceptance{{Code: CodeExtraWritable, Subject: "/srv/cache", Reason: "build cache"}}, Workspaces: []string{"/work/project"}},
			[]string{"extra-writable-mount medium"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := hardened()
			tc.change(&c)
			o := opts
			if tc.opts != nil {
				o = *tc.opts
			}
			r := Audit([]Container{c}, o)
			if diff := cmp.Diff(tc.want, codesOf(r.Containers[0].Findings)); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
		})
	}
}

// withInit makes the model's process an init bound read-only at /init that
// holds four capabilities.
func withInit(c *Container) {
	c.User, c.Command = "0:0", []string{"/init"}
	c.Caps = []string{"CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP", "CAP_KILL"}
	c.Mounts = append(c.Mounts, Mount{Type: "bind", Source: "/opt/agentbox-init", Destination: "/init", ReadOnly: true})
}

var initOpts = Options{
	Workspaces: []string{"/work/project"}, RuntimeFiles: []string{"/opt/agentbox-init"},
	Init: &InitProcess{Path: "/init", Caps: []string{"CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP", "CAP_KILL"}},
}

func TestMountClassification(t *testing.T) {
	o := Options{
		Workspaces:    []string{"/work/project", "/home/bob/src/app", "/srv/users/ana", "/etc"},
		ReadOnlyPaths: []string{"/home/bob/.local/share/claude"},
		HomeDirs:      []string{"/srv/users/ana"},
	}.normalized()
	tests := []struct {
		m    Mount
		want string
	}{
		{Mount{Type: "bind", Source: "/var/run/docker.sock", Destination: "/d.sock"}, CodeContainerSocket},
		{Mount{Type: "bind", Source: "/run", Destination: "/r", ReadOnly: true}, CodeContainerSocket},
		{Mount{Type: "bind", Source: "/run/containerd/io.containerd.runtime.v2.task/k8s.io/x", Destination: "/t"}, CodeContainerSocket},
		{Mount{Type: "bind", Source: "/home/x/.docker/run/docker.sock", Destination: "/d"}, CodeContainerSocket},
		{Mount{Type: "bind", Source: "/", Destination: "/host", ReadOnly: true}, CodeHostRoot},
		{Mount{Type: "bind", Source: "/home", Destination: "/h", ReadOnly: true}, CodeHomeDirectory},
		{Mount{Type: "bind", Source: "/home/bob/.aws", Destination: "/a", ReadOnly: true}, CodeHomeDirectory},
		{Mount{Type: "bind", Source: "/root", Destination: "/r"}, CodeHomeDirectory},
		{Mount{Type: "bind", Source: "/Users/ana/.ssh", Destination: "/s"}, CodeHomeDirectory},
		{Mount{Type: "bind", Source: "/srv/users/ana/.gitconfig", Destination: "/g", ReadOnly: true}, CodeHomeDirectory},
		{Mount{Type: "bind", Source: "/srv/users", Destination: "/u", ReadOnly: true}, CodeHomeDirectory},
		{Mount{Type: "bind", Source: "/etc", Destination: "/e", ReadOnly: true}, CodeSystemDirectory},
		{Mount{Type: "bind", Source: "/proc", Destination: "/p", ReadOnly: true}, CodeSystemDirectory},
		{Mount{Type: "bind", Source: "/var/lib", Destination: "/v"}, CodeSystemDirectory},
		{Mount{Type: "bind", Source: "/tmp", Destination: "/t"}, CodeSystemDirectory},
		{Mount{Type: "bind", Source: "/usr", Destination: "/usr", ReadOnly: true}, ""},
		{Mount{Type: "bind", Source: "/usr", Destination: "/usr"}, CodeSystemDirectory},
		{Mount{Type: "bind", Source: "/etc/localtime", Destination: "/etc/localtime", ReadOnly: true}, ""},
		{Mount{Type: "bind", Source: "/work/project", Destination: "/workspace"}, ""},
		{Mount{Type: "bind", Source: "/work/project/sub", Destination: "/sub"}, ""},
		{Mount{Type: "bind", Source: "/work/projectx", Destination: "/x"}, CodeExtraWritable},
		{Mount{Type: "bind", Source: "/work/other", Destination: "/o", ReadOnly: true}, ""},
		{Mount{Type: "volume", Source: "cache", Destination: "/c"}, CodeExtraWritable},
		{Mount{Type: "volume", Source: "etc", Destination: "/etc", ReadOnly: true}, ""},
		{Mount{Type: "tmpfs", Destination: "/tmp"}, ""},
		{Mount{Type: "tmpfs", Destination: "/var/run/docker.sock"}, ""},
		{Mount{Type: "volume", Source: "sock", Destination: "/var/run/docker.sock"}, CodeContainerSocket},
		{Mount{Type: "bind", Source: "/home/bob/src/app", Destination: "/workspace"}, ""},
		{Mount{Type: "bind", Source: "/home/bob/src/app/run/docker.sock", Destination: "/d.sock"}, CodeContainerSocket},
		{Mount{Type: "bind", Source: "/home/bob/.local/share/claude", Destination: "/opt/claude", ReadOnly: true}, ""},
		{Mount{Type: "bind", Source: "/home/bob/.local/share/claude", Destination: "/opt/claude"}, CodeHomeDirectory},
		{Mount{Type: "bind", Source: "/srv/users/ana/x", Destination: "/w"}, CodeHomeDirectory},
		{Mount{Type: "bind", Source: "/etc/x", Destination: "/w"}, CodeSystemDirectory},
	}
	for _, tc := range tests {
		got := ""
		if f, ok := classifyMount(tc.m, &o); ok {
			got = f.Code
		}
		if got != tc.want {
			t.Errorf("%s: got %q, want %q", mountSubject(tc.m), got, tc.want)
		}
	}
}

func TestSecretName(t *testing.T) {
	secret := []string{
		"GITHUB_TOKEN", "HF_TOKEN", "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "AWS_SECRET_ACCESS_KEY",
		"AWS_ACCESS_KEY_ID", "AWS_SESSION_TOKEN", "DB_PASSWORD", "MYSQL_ROOT_PASSWORD", "SMTP_PASS", "PGPASSWORD", "MYSQL_PWD",
		"CLIENT_SECRET", "GOOGLE_APPLICATION_CREDENTIALS", "STRIPE_APIKEY", "SSH_PRIVATE_KEY", "gh_token", "npm-token",
		"SENTRY_DSN", "JWT", "GH_PAT",
	}
	notSecret := []string{
		"TOKENIZERS_PARALLELISM", "PATH", "HOME", "PWD", "AWS_REGION", "AWS_PROFILE", "PASSWORD_FILE",
		"TOKEN_URL", "SECRETS_DIR", "KEYBOARD", "PASSTHROUGH", "MONKEY", "SORT_KEY", "GITHUB_TOKEN_PATH", "LANG",
		"BYPASS_CACHE", "PATTERN",
	}
	for _, n := range secret {
		if !SecretName(n) {
			t.Errorf("SecretName(%q) = false, want true", n)
		}
	}
	for _, n := range notSecret {
		if SecretName(n) {
			t.Errorf("SecretName(%q) = true, want false", n)
		}
	}
}

func TestSecretValuesAreNeverPrinted(t *testing.T) {
	const value = "ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123"
	c := hardened()
	c.Env = []EnvVar{{Name: "GITHUB_TOKEN", Value: value}, {Name: "HARMLESS", Value: value}, {Name: "DOCKER_HOST", Value: "unix:///secret/path.sock"}}
	r := Audit([]Container{c}, Options{Workspaces: []string{"/work/project"}})
	var sb strings.Builder
	for _, write := range []func() error{
		func() error { return WriteText(&sb, r, false) },
		func() error { return WriteJSON(&sb, r) },
		func() error { return WriteSARIF(&sb, r, "") },
		func() error { return WriteDiagnose(&sb, r) },
		func() error { b, err := r.Record(); sb.Write(b); return err },
	} {
		if err := write(); err != nil {
			t.Fatal(err)
		}
	}
	out := sb.String()
	for _, leak := range []string{value, "/secret/path.sock"} {
		if strings.Contains(out, leak) {
			t.Errorf("output contains the value %q", leak)
		}
	}
	if got := codesOf(r.Containers[0].Findings); !cmp.Equal(got, []string{"container-socket-mounted critical", "secret-in-environment high", "secret-in-environment high"}) {
		t.Errorf("findings = %v", got)
	}
}

func TestAutoApproveArgv(t *testing.T) {
	tests := []struct {
		argv []string
		want []string
	}{
		{[]string{"codex", "--dangerously-bypass-approvals-and-sandbox"}, []string{"codex --dangerously-bypass-approvals-and-sandbox"}},
		{[]string{"/usr/local/bin/codex", "--yolo"}, []string{"codex --yolo"}},
		{[]string{"codex", "-a", "never", "exec", "x"}, []string{"codex -a"}},
		{[]string{"codex", "--ask-for-approval=never"}, []string{"codex --ask-for-approval"}},
		{[]string{"codex", "-c", `approval_policy="never"`}, []string{"codex -c approval_policy"}},
		// The review found these three missed by a second table here.
		{[]string{"codex", "exec", "fix the tests"}, []string{"codex exec"}},
		{[]string{"codex", "e", "fix the tests"}, []string{"codex exec"}},
		{[]string{"codex", "--full-auto"}, []string{"codex --full-auto"}},
		{[]string{"codex", "-a", "on-request"}, nil},
		{[]string{"codex", "-s", "danger-full-access"}, nil}, // codex's own sandbox off, but it still asks
		{[]string{"sh", "-c", "claude -p hi --dangerously-skip-permissions"}, []string{"claude --dangerously-skip-permissions"}},
		{[]string{"claude", "--permission-mode", "bypassPermissions"}, []string{"claude --permission-mode"}},
		{[]string{"claude", "--permission-mode", "plan"}, nil},
		{[]string{"gemini", "--yolo"}, []string{"gemini --yolo"}},
		{[]string{"gemini", "-y"}, []string{"gemini -y"}},
		{[]string{"aider", "--yes-always"}, []string{"aider --yes-always"}},
		{[]string{"cline", "-y", "task"}, []string{"cline -y"}},
		{[]string{"apt-get", "install", "-y", "git"}, nil},
		{[]string{"mytool", "--yolo"}, nil},
	}
	for _, tc := range tests {
		var got []string
		for _, h := range approveInArgv(tc.argv) {
			got = append(got, h.subject)
		}
		if !cmp.Equal(got, tc.want) {
			t.Errorf("%q: got %q, want %q", tc.argv, got, tc.want)
		}
	}
}

func TestAutoApproveEnv(t *testing.T) {
	c := hardened()
	c.Env = []EnvVar{{Name: "GOOSE_MODE", Value: "auto"}, {Name: "AIDER_YES_ALWAYS", Value: "true"}, {Name: "GOOSE_MODE2", Value: "auto"}}
	got := codesOf(checkAutoApprove(&c, &Options{}))
	if want := []string{"auto-approve-permission-mode info", "auto-approve-permission-mode info"}; !cmp.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestParseAccept(t *testing.T) {
	if c, r, err := ParseAccept("host-network-mode=lab VM, no secrets"); err != nil || c != CodeHostNetwork || r != "lab VM, no secrets" {
		t.Errorf("got %q %q %v", c, r, err)
	}
	for _, bad := range []string{"host-network-mode", "host-network-mode=", "no-such-code=why"} {
		if _, _, err := ParseAccept(bad); err == nil {
			t.Errorf("ParseAccept(%q) accepted", bad)
		}
	}
}

func TestCatalogIsComplete(t *testing.T) {
	for _, r := range Catalog() {
		if r.Severity == "" || r.Title == "" || r.Symptom == "" || r.Fix == "" || r.Residual == "" {
			t.Errorf("%s: incomplete rule %+v", r.Code, r)
		}
	}
	owner := map[string]string{}
	all := append(Checks(), WarnChecks()...)
	for _, ch := range AccountChecks() {
		all = append(all, Check{Name: ch.Name, Codes: ch.Codes, Run: func(*Container, *Options) []Finding { return nil }})
	}
	for _, ch := range all {
		if ch.Name == "" || ch.Run == nil || len(ch.Codes) == 0 {
			t.Errorf("check %q has no name, body or codes", ch.Name)
		}
		for _, code := range ch.Codes {
			if _, ok := catalog[code]; !ok {
				t.Errorf("check %s names %s, which is not in the catalog", ch.Name, code)
			}
			owner[code] = ch.Name
		}
	}
	for _, r := range Catalog() {
		if owner[r.Code] == "" {
			t.Errorf("no check reports %s", r.Code)
		}
	}
}

// Every finding a check reports is one of its declared codes; the inputs
// are every fixture this package has, weak and hardened.
func TestChecksReportOnlyTheirCodes(t *testing.T) {
	cs := []Container{hardened()}
	for _, f := range []string{"faults.json", "weak.json", "hardened.json"} {
		if _, err := os.Stat(filepath.Join("testdata", "inspect", f)); err == nil {
			cs = append(cs, parseFixture(t, f)...)
		}
	}
	seen := map[string]bool{}
	for i := range cs {
		c := &cs[i]
		for _, ch := range append(Checks(), WarnChecks()...) {
			for _, f := range ch.Run(c, &Options{}) {
				seen[f.Code] = true
				if !slices.Contains(ch.Codes, f.Code) {
					t.Errorf("check %s reported %s, not among its codes %v", ch.Name, f.Code, ch.Codes)
				}
			}
		}
	}
	if len(seen) < 10 {
		t.Errorf("the fixtures exercised only %d codes; the test proves little", len(seen))
	}
}

func TestResolveFollowsSymlinks(t *testing.T) {
	link := filepath.Join(t.TempDir(), "harmless")
	if err := os.Symlink("/run", link); err != nil {
		t.Fatal(err)
	}
	c := hardened()
	c.Mounts = append(c.Mounts, Mount{Type: "bind", Source: link, Destination: "/data", ReadOnly: true})
	c.Resolve()
	if got := c.Mounts[1].HostPath; got != "/run" {
		t.Fatalf("HostPath = %q, want /run", got)
	}
	r := Audit([]Container{c}, Options{Workspaces: []string{"/work/project"}})
	if got := codesOf(r.Containers[0].Findings); !cmp.Equal(got, []string{"container-socket-mounted critical"}) {
		t.Errorf("findings = %v", got)
	}
}

// TestProcMasksFollowTheSpec: the audit expects of any container the
// masks every engine shares, read from the spec's one list, and names what
// is missing; the masks only agentbox adds (the boot facts) are not
// expected of others, and agentbox's own spec passes.
func TestProcMasksFollowTheSpec(t *testing.T) {
	without := func(list []string, drop ...string) []string {
		var out []string
		for _, p := range list {
			if !slices.Contains(drop, p) {
				out = append(out, p)
			}
		}
		return out
	}
	all, ro := spec.Paths(spec.MaskedPaths), spec.Paths(spec.ReadonlyPaths)
	tests := []struct {
		name    string
		masked  []string
		missing []string
	}{
		{"agentbox's spec", all, nil},
		{"the engines' share only", spec.EnginePaths(spec.MaskedPaths), nil},
		{"no boot facts masked", without(all, "/proc/cmdline", "/proc/bootconfig", "/proc/config.gz"), nil},
		{"keys and firmware unmasked", without(all, "/proc/keys", "/sys/firmware"), []string{"/proc/keys", "/sys/firmware"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := hardened()
			c.PathsKnown, c.ProcMounted, c.MaskedPaths, c.ReadonlyPaths = true, true, tt.masked, ro
			fs := checkProcMasks(&c, &Options{})
			if len(tt.missing) == 0 {
				if len(fs) != 0 {
					t.Errorf("findings %v, want none", fs)
				}
				return
			}
			if len(fs) != 1 || fs[0].Code != CodeProcMasks {
				t.Fatalf("findings %v, want one %s", fs, CodeProcMasks)
			}
			if want := "these paths are neither masked nor read-only: " + strings.Join(tt.missing, ", "); fs[0].Detail != want {
				t.Errorf("detail %q, want %q", fs[0].Detail, want)
			}
		})
	}
}

func TestPresumedWorkspace(t *testing.T) {
	bind := func(src, dst string, ro bool) Mount {
		return Mount{Type: "bind", Source: src, Destination: dst, ReadOnly: ro}
	}
	home := []string{"/srv/users/ana"}
	tests := []struct {
		name     string
		change   func(c *Container)
		opts     Options
		want     []string // findings: "code subject"
		presumed string
	}{
		{"one read-write bind is the workspace", func(c *Container) {}, Options{}, nil, "/work/project"},
		{"beside a read-only bind", func(c *Container) {
			c.Mounts = append(c.Mounts, bind("/srv/keys", "/keys", true))
		}, Options{}, nil, "/work/project"},
		{"several read-write binds: none is presumed", func(c *Container) {
			c.Mounts = append(c.Mounts, bind("/srv/cache", "/cache", false))
		}, Options{}, []string{"extra-writable-mount /srv/cache -> /cache", "extra-writable-mount /work/project -> /workspace"}, ""},
		{"compose: the project directory is the workspace", func(c *Container) {
			c.ProjectDir = "/work/project"
			c.Mounts = append(c.Mounts, bind("/srv/cache", "/cache", false))
		}, Options{}, []string{"extra-writable-mount /srv/cache -> /cache"}, "/work/project"},
		{"compose: the bind on working_dir is the workspace", func(c *Container) {
			c.ProjectDir, c.WorkingDir = "/work/elsewhere", "/workspace/"
			c.Mounts = append([]Mount{bind("/srv/cache", "/cache", false)}, c.Mounts...)
		}, Options{}, []string{"extra-writable-mount /srv/cache -> /cache"}, "/work/project"},
		{"a home directory is never presumed", func(c *Container) {
			c.Mounts = []Mount{bind("/srv/users/ana", "/workspace", false)}
		}, Options{HomeDirs: home}, []string{"home-directory-mounted /srv/users/ana -> /workspace"}, ""},
		{"a project inside a home directory is", func(c *Container) {
			c.Mounts = []Mount{bind("/srv/users/ana/src/app", "/workspace", false)}
		}, Options{HomeDirs: home}, nil, "/srv/users/ana/src/app"},
		{"a system directory is never presumed", func(c *Container) {
			c.Mounts = []Mount{bind("/etc", "/workspace", false)}
		}, Options{}, []string{"system-directory-mounted /etc -> /workspace"}, ""},
		{"a writable volume stays a finding", func(c *Container) {
			c.Mounts = append(c.Mounts, Mount{Type: "volume", Source: "cache", Destination: "/cache"})
		}, Options{}, []string{"extra-writable-mount cache -> /cache"}, "/work/project"},
		{
			"a declared workspace wins", func(c *Container) {},
			Options{Workspaces: []string{"/work/other"}},
			[]string{"extra-writable-mount /work/project -> /workspace"},
			"",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := hardened()
			tc.change(&c)
			r := Audit([]Container{c}, tc.opts)
			var got []string
			for _, f := range r.Containers[0].Findings {
				got = append(got, f.Code+" "+f.Subject)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
			if p := r.Containers[0].Model.PresumedWorkspace; p != tc.presumed {
				t.Errorf("presumed workspace %q, want %q", p, tc.presumed)
			}
			var text strings.Builder
			if err := WriteText(&text, r, false); err != nil {
				t.Fatal(err)
			}
			note := "[" + PresumedWorkspaceNote + "]"
			if strings.Contains(text.String(), note) != (tc.presumed != "") {
				t.Errorf("the Mounts section says %q: %v, want %v:\n%s", note, !(tc.presumed != ""), tc.presumed != "", text.String())
			}
		})
	}
}

func TestPermissionMode(t *testing.T) {
	tests := []struct {
		name   string
		change func(c *Container)
		want   string
	}{
		{"no agent", func(c *Container) { c.Command = []string{"/bin/sh"} }, "none found"},
		{"an agent in its default mode", func(c *Container) { c.Command = []string{"claude"} }, "claude default (default, command line)"},
		{
			"a flag", func(c *Container) { c.Command = []string{"claude", "--dangerously-skip-permissions"} },
			"claude bypassPermissions (--dangerously-skip-permissions, command line)",
		},
		{"through a shell, at its line", func(c *Container) {
			c.Command, c.KeyLines = []string{"sh", "-c", "codex --yolo"}, map[string]Location{"command": {File: "compose.yaml", Line: 7}}
		}, "codex approval=never sandbox=danger-full-access (--yolo, command line at compose.yaml:7)"},
		{"the environment", func(c *Container) {
			c.Command, c.Env = []string{"/bin/sh"}, []EnvVar{{Name: "GOOSE_MODE", Value: "auto", Location: Location{File: "compose.yaml", Line: 9}}}
		}, "goose auto-approve (GOOSE_MODE, environment at compose.yaml:9)"},
		{"a settings file", func(c *Container) {
			c.AgentConfigs = []AgentConfig{{Agent: "claude", Path: "/work/project/.claude/settings.json", AutoApprove: "defaultMode bypassPermissions"}}
		}, "claude defaultMode bypassPermissions (settings, /work/project/.claude/settings.json)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := hardened()
			tc.change(&c)
			r := Audit([]Container{c}, Options{})
			if got := r.Containers[0].PermissionMode.String(); got != tc.want {
				t.Errorf("permission_mode %q, want %q", got, tc.want)
			}
			var text strings.Builder
			if err := WriteText(&text, r, false); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(text.String(), "\npermission_mode: "+tc.want+"\n") {
				t.Errorf("the text report lacks the permission_mode line:\n%s", text.String())
			}
			var js strings.Builder
			if err := WriteJSON(&js, r); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(js.String(), `"permission_mode": {`) {
				t.Errorf("the JSON report lacks permission_mode:\n%s", js.String())
			}
		})
	}
}
