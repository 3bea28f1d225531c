package policy

import (
	"errors"
	"io/fs"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	specs "github.com/opencontainers/runtime-spec/specs-go"
)

func resolve(t *testing.T, p Policy, argv []string, setup func(*fakeFS, *Host)) (*Plan, error) {
	t.Helper()
	f := newFakeFS()
	f.dir("/srv/proj", 0, 0)
	h := testHost(f)
	if setup != nil {
		setup(f, &h)
	}
	return Resolve(p, argv, h, Run{ID: "R", Bundle: "/run/agentbox/runs/R/bundle"})
}

func mountsOf(p *Plan, kind MountKind) []Mount {
	var out []Mount
	for _, m := range p.Mounts {
		if m.Kind == kind {
			out = append(out, m)
		}
	}
	return out
}

func TestResolveDefault(t *testing.T) {
	plan, err := resolve(t, Policy{}, []string{"sh", "-c", "true"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"/usr/bin/sh", "-c", "true"}, plan.Command); d != "" {
		t.Errorf("command: %s", d)
	}
	wantEnv := []string{"PATH=" + SystemPath, "HOME=/home/agent", "USER=agent", "LOGNAME=agent", "TERM=xterm", "LANG=C.UTF-8", "LC_ALL=C"}
	if d := cmp.Diff(wantEnv, plan.Env); d != "" {
		t.Errorf("env: nothing but the allowlist may cross (-want +got):\n%s", d)
	}
	wantMounts := []Mount{
		{Kind: KindEtc, Source: "/etc/ld.so.cache", Destination: "/etc/ld.so.cache", ReadOnly: true},
		{Kind: KindEtc, Source: "/etc/ssl/certs", Destination: "/etc/ssl/certs", ReadOnly: true},
		{Kind: KindTmpfs, Destination: "/home/agent", Options: []string{"mode=0700", "uid=1000", "gid=1000"}},
		{Kind: KindWorkspace, Source: "/srv/proj", Destination: "/srv/proj"},
		{Kind: KindTmpfs, Destination: "/tmp", Options: []string{"mode=1777"}},
		{Kind: KindSystem, Source: "/usr", Destination: "/usr", ReadOnly: true},
	}
	if d := cmp.Diff(wantMounts, plan.Mounts); d != "" {
		t.Errorf("mounts (-want +got):\n%s", d)
	}
	wantLinks := map[string]string{"/bin": "usr/bin", "/lib": "usr/lib", "/etc/localtime": "/usr/share/zoneinfo/Etc/UTC"}
	if d := cmp.Diff(wantLinks, plan.Rootfs.Symlinks); d != "" {
		t.Errorf("symlinks: %s", d)
	}
	if !strings.Contains(plan.Rootfs.Files["/etc/passwd"], "agent:x:1000:1000:") || plan.Rootfs.Files["/etc/resolv.conf"] != "" {
		t.Errorf("synthesized /etc: %v", plan.Rootfs.Files)
	}
	id := plan.Identity
	if !id.GrantWorkspace || id.KeepUID != nil || id.UID != AgentUID {
		t.Errorf("a root-owned workspace must be granted to an unprivileged agent, got %+v", id)
	}
	if rt := plan.Runtime; rt.Name != "runc" || rt.Path != "/usr/sbin/runc" || rt.Chosen != ChosenDefault || plan.Cwd != "/srv/proj" {
		t.Errorf("runtime %+v cwd %s", plan.Runtime, plan.Cwd)
	}
	if plan.Limits == nil || plan.Limits.MemoryBytes != 4<<30 || plan.Limits.Pids != 512 || plan.Limits.CPUWeight != 100 {
		t.Errorf("limits: %+v", plan.Limits)
	}
	if len(plan.Residuals) != 1 || plan.Residuals[0].Code != "lsm-unavailable" {
		t.Errorf("residuals: %+v", plan.Residuals)
	}
}

func TestResolveKeepsWorkspaceOwner(t *testing.T) {
	plan, err := resolve(t, Policy{Workspace: "/home/ana/proj"}, []string{"sh"}, func(f *fakeFS, h *Host) {
		f.dir("/home/ana/proj", 1000, 1000)
	})
	if err != nil {
		t.Fatal(err)
	}
	id := plan.Identity
	if id.UID != 1000 || id.KeepUID == nil || *id.KeepUID != 1000 || id.GrantWorkspace {
		t.Errorf("identity %+v: want the agent to keep the owner's uid 1000", id)
	}
	if id.IDMap != (IDMap{Mode: IDSlot}) {
		t.Errorf("id map %+v, want a slot leased after planning", id.IDMap)
	}
}

func TestResolveRefuses(t *testing.T) {
	tests := []struct {
		name  string
		p     Policy
		argv  []string
		setup func(*fakeFS, *Host)
		want  string
		code  string // the class's finding code; "" for refusals of no path class
	}{
		{name: "workspace is /", p: Policy{Workspace: "/"}, want: "the host's root directory", code: CodeHostRoot},
		{name: "workspace is a home", p: Policy{Workspace: "/home/ana"}, want: "is the home directory /home/ana", code: CodeHome},
		{name: "workspace contains homes", p: Policy{Workspace: "/home"}, want: "/home contains the home directory /home/ana", code: CodeHome},
		{name: "workspace is a system dir", p: Policy{Workspace: "/etc/ssl"}, want: "inside the system directory /etc", code: CodeSystem},
		{name: "workspace in /opt", p: Policy{Workspace: "/opt/proj"}, setup: func(f *fakeFS, _ *Host) { f.dir("/opt", 0, 0); f.dir("/opt/proj", 0, 0) }, want: "inside the system directory /opt", code: CodeSystem},
		{name: "workspace is /tmp", p: Policy{Workspace: "/tmp"}, want: "the host's shared /tmp", code: CodeSystem},
		{name: "workspace missing", p: Policy{Workspace: "/nope"}, want: "/nope does not exist"},
		{name: "workspace through a symlink to home", p: Policy{Workspace: "/srv/link"}, setup: func(f *fakeFS, _ *Host) { f.link("/srv/link", "/home/ana") }, want: "/srv/link resolves to /home/ana, which is the home directory", code: CodeHome},
		{name: "socket bind", p: Policy{Binds: Binds{ReadOnly: []string{"/run/docker.sock"}}}, want: "/run/docker.sock is a container engine socket", code: CodeSocket},
		{name: "socket via /var/run", p: Policy{Binds: Binds{ReadOnly: []string{"/var/run/docker.sock"}}}, setup: func(f *fakeFS, _ *Host) { f.link("/var/run", "/run") }, want: "container engine socket", code: CodeSocket},
		{name: "socket by any name", p: Policy{Binds: Binds{ReadWrite: []string{"/srv/api"}}}, setup: func(f *fakeFS, _ *Host) { f.files["/srv/api"] = FileInfo{Mode: 0o660 | fs.ModeSocket} }, want: "container engine socket", code: CodeSocket},
		{name: "dir holding a socket", p: Policy{Binds: Binds{ReadOnly: []string{"/run"}}}, want: "/run contains the container engine socket /run/docker.sock", code: CodeSocket},
		{name: "rootless runtime dir", p: Policy{Binds: Binds{ReadOnly: []string{"/run/user/1000"}}}, setup: func(f *fakeFS, _ *Host) { f.dir("/run/user", 0, 0); f.dir("/run/user/1000", 1000, 1000) }, want: "per-user runtime sockets", code: CodeSocket},
		{name: "kubelet plugin dir", p: Policy{Binds: Binds{ReadOnly: []string{"/var/lib/kubelet/plugins_registry"}}}, setup: func(f *fakeFS, _ *Host) {
			f.dir("/var/lib", 0, 0)
			f.dir("/var/lib/kubelet", 0, 0)
			f.dir("/var/lib/kubelet/plugins_registry", 0, 0)
		}, want: "container engine socket", code: CodeSocket},
		{name: "dotdot into home", p: Policy{Binds: Binds{ReadOnly: []string{"/srv/../home/ana"}}}, want: "home directory", code: CodeHome},
		{name: "inside a home", p: Policy{Binds: Binds{ReadOnly: []string{"/home/ana/.ssh"}}}, setup: func(f *fakeFS, _ *Host) { f.dir("/home/ana/.ssh", 1000, 1000) }, want: "inside the home directory /home/ana; read-only does not help", code: CodeHome},
		{name: "system dir bind", p: Policy{Binds: Binds{ReadWrite: []string{"/var"}}}, want: "/var is the system directory /var", code: CodeSystem},
		{name: "writable code dir", p: Policy{Binds: Binds{ReadWrite: []string{"/usr/lib"}}}, want: "inside the system directory /usr", code: CodeSystem},
		{name: "host's /tmp", p: Policy{Binds: Binds{ReadWrite: []string{"/tmp"}}}, want: "shared /tmp", code: CodeSystem},
		{name: "host root bind", p: Policy{Binds: Binds{ReadOnly: []string{"/"}}, Accept: []Acceptance{{Code: "host-root-mounted", Reason: "x"}}}, want: "host's root", code: CodeHostRoot},
		{name: "command not found", argv: []string{"codex"}, want: `"codex" not found on PATH`},
		{name: "duplicate bind", p: Policy{Binds: Binds{ReadOnly: []string{"/srv/proj"}}}, want: "mounted twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			argv := tt.argv
			if argv == nil {
				argv = []string{"sh"}
			}
			_, err := resolve(t, tt.p, argv, tt.setup)
			var in *InputError
			if !errors.As(err, &in) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Resolve error = %v, want an InputError containing %q", err, tt.want)
			}
			code := ""
			if pr := (*PathRefusal)(nil); errors.As(err, &pr) {
				code = pr.Code
			}
			if code != tt.code {
				t.Errorf("Resolve error = %v: path class %q, want %q", err, code, tt.code)
			}
			if tt.code != "" && tt.code != CodeHostRoot && !strings.Contains(err.Error(), "--accept "+tt.code+"=REASON") {
				t.Errorf("Resolve error = %v, want it to say how to accept %s", err, tt.code)
			}
			if tt.code != "" && tt.p.Workspace == "" && !strings.Contains(err.Error(), PathFixes[tt.code]) {
				t.Errorf("Resolve error = %v, want the class's fix %q", err, PathFixes[tt.code])
			}
		})
	}
}

// What the planner lets through of the classes, because the audit does:
// a workspace below /tmp or inside a home, read-only binds of code and of
// harmless files, a bind inside the workspace, a directory of one's own.
func TestResolveBindsTheAuditPasses(t *testing.T) {
	tests := []struct {
		name  string
		p     Policy
		setup func(*fakeFS, *Host)
	}{
		{"workspace below /tmp", Policy{Workspace: "/tmp/ws"}, func(f *fakeFS, _ *Host) { f.dir("/tmp/ws", 0, 0) }},
		{"workspace inside a home", Policy{Workspace: "/home/ana/proj"}, func(f *fakeFS, _ *Host) { f.dir("/home/ana/proj", 1000, 1000) }},
		{"read-only code", Policy{Binds: Binds{ReadOnly: []string{"/usr/lib"}}}, nil},
		{"read-only /opt", Policy{Binds: Binds{ReadOnly: []string{"/opt/tool"}}}, func(f *fakeFS, _ *Host) { f.dir("/opt", 0, 0); f.dir("/opt/tool", 0, 0) }},
		{"read-only harmless file", Policy{Binds: Binds{ReadOnly: []string{"/etc/timezone"}}}, func(f *fakeFS, _ *Host) { f.file("/etc/timezone", 0o644, 0) }},
		{"bind inside the workspace in a home", Policy{Workspace: "/home/ana/proj", Binds: Binds{ReadOnly: []string{"/home/ana/proj/vendor"}}}, func(f *fakeFS, _ *Host) {
			f.dir("/home/ana/proj", 1000, 1000)
			f.dir("/home/ana/proj/vendor", 1000, 1000)
		}},
		{"a directory below /tmp", Policy{Binds: Binds{ReadWrite: []string{"/tmp/cache"}}}, func(f *fakeFS, _ *Host) { f.dir("/tmp/cache", 0, 0) }},
		{
			"accepted inside a home",
			Policy{Binds: Binds{ReadOnly: []string{"/home/ana/.gitconfig"}}, Accept: []Acceptance{{Code: CodeHome, Subject: "/home/ana/.gitconfig", Reason: "git identity"}}},
			func(f *fakeFS, _ *Host) { f.file("/home/ana/.gitconfig", 0o644, 1000) },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := resolve(t, tt.p, []string{"sh"}, tt.setup); err != nil {
				t.Errorf("Resolve: %v", err)
			}
		})
	}
}

// A path that cannot be resolved is reported as what the system said: a
// missing path, a directory this user cannot search, a symlink loop.
func TestResolveSaysWhyAPathCannotBeResolved(t *testing.T) {
	tests := []struct {
		name  string
		p     Policy
		setup func(*fakeFS, *Host)
		want  string
		fix   string
	}{
		{"missing bind", Policy{Binds: Binds{ReadOnly: []string{"/srv/data"}}}, nil, "/srv/data does not exist", "create it or remove the bind"},
		{"unsearchable bind", Policy{Binds: Binds{ReadOnly: []string{"/srv/locked/data"}}}, func(f *fakeFS, h *Host) {
			f.errs["/srv/locked"] = fs.ErrPermission
			h.EUID = 1000
		}, "/srv/locked/data cannot be resolved: permission denied (at /srv/locked) for uid 1000", "search every directory on the way"},
		{
			"unsearchable workspace",
			Policy{Workspace: "/srv/locked/ws"},
			func(f *fakeFS, _ *Host) { f.errs["/srv/locked"] = fs.ErrPermission },
			"/srv/locked/ws cannot be resolved: permission denied (at /srv/locked)", "run agentbox as a user who can",
		},
		{
			"workspace loop",
			Policy{Workspace: "/srv/a"},
			func(f *fakeFS, _ *Host) { f.errs["/srv/a"] = syscall.ELOOP },
			"/srv/a cannot be resolved: too many levels of symbolic links", "fix or remove it",
		},
		{
			"other error",
			Policy{Workspace: "/srv/io"},
			func(f *fakeFS, _ *Host) { f.errs["/srv/io"] = syscall.EIO },
			"/srv/io cannot be resolved: lstat /srv/io: input/output error", "check the path",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := resolve(t, tt.p, []string{"sh"}, tt.setup)
			var in *InputError
			if !errors.As(err, &in) || !strings.Contains(in.Msg, tt.want) || !strings.Contains(in.Fix, tt.fix) {
				t.Errorf("Resolve error = %v, want an InputError saying %q, fix %q", err, tt.want, tt.fix)
			}
			if tt.want != "/srv/data does not exist" && strings.Contains(err.Error(), "does not exist") {
				t.Errorf("Resolve error = %v calls an existing path missing", err)
			}
		})
	}
}

// The refusal's fix names both ways to accept, the same text everywhere.
func TestAcceptHint(t *testing.T) {
	want := `accept it with --accept home-directory-mounted=REASON, or in agentbox.yaml with: accept: [{code: home-directory-mounted, subject: "/home/ana/.ssh", reason: "…"}]`
	if got := AcceptHint(CodeHome, "/home/ana/.ssh"); got != want {
		t.Errorf("AcceptHint = %q, want %q", got, want)
	}
	if got := AcceptHint(CodeSocket, ""); strings.Contains(got, "subject") || !strings.Contains(got, "--accept container-socket-mounted=REASON") {
		t.Errorf("AcceptHint without a subject = %q", got)
	}
}

// A map that reaches host root is a refusal (exit 3), not a host error,
// and names the file to fix and how: for the maps made after planning from
// a leased slot (CheckMappings), and at planning for subordinate ranges
// that start at 0.
func TestHostRootMapIsRefused(t *testing.T) {
	bad := []specs.LinuxIDMapping{{ContainerID: 0, HostID: 0, Size: 65536}}
	good := []specs.LinuxIDMapping{{ContainerID: 0, HostID: 100000, Size: 65536}}
	root := Identity{UID: AgentUID, GID: AgentGID}
	rootless := Identity{UID: AgentUID, GID: AgentGID, Rootless: true}
	tests := []struct {
		name  string
		check func() error
		want  []string
	}{
		{"uid", func() error { return root.CheckMappings(bad, good) }, []string{"uid map 0→0 (65536 ids) would make sandbox uid 0 host root", "agentbox's entry in /etc/subuid", "usermod --del-subuids 0-65535 --add-subuids 200000-265535 agentbox"}},
		{"gid", func() error { return root.CheckMappings(good, bad) }, []string{"gid map 0→0", "/etc/subgid", "--del-subgids 0-65535"}},
		{"rootless", func() error { return rootless.CheckMappings(bad, good) }, []string{"your entry in /etc/subuid", "$USER"}},
		{"rootless subordinate range at 0", func() error {
			_, err := resolve(t, Policy{}, []string{"sh"}, func(_ *fakeFS, h *Host) {
				h.EUID, h.EGID = 1000, 1000
				h.SubIDs = SubIDs{User: "ana", UID: IDRange{Start: 0, Count: 65536}, GID: IDRange{Start: 200000, Count: 65536}, NewIDMap: true}
			})
			return err
		}, []string{"your entry in /etc/subuid", "--del-subuids 0-65535"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.check()
			var ref *RefusedError
			if !errors.As(err, &ref) {
				t.Fatalf("error = %v, want a RefusedError", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error = %v, want it to say %q", err, w)
				}
			}
		})
	}
}

// CheckMappings also refuses maps that leave the agent, or a split init,
// without a host id.
func TestCheckMappingsNeedsTheAgentAndInitMapped(t *testing.T) {
	one := []specs.LinuxIDMapping{{ContainerID: 1000, HostID: 1000, Size: 1}}
	slot := []specs.LinuxIDMapping{{ContainerID: 0, HostID: 100000, Size: 65536}}
	split := Identity{UID: 1000, GID: 1000, Init: InitIdentity{Split: true}}
	if err := split.CheckMappings(one, one); err == nil || !strings.Contains(err.Error(), "init's uid 0 is not mapped") {
		t.Errorf("split init without 0 mapped: %v", err)
	}
	if err := (Identity{UID: 70000, GID: 1000}).CheckMappings(slot, slot); err == nil || !strings.Contains(err.Error(), "agent uid 70000") {
		t.Errorf("agent outside the map: %v", err)
	}
	if err := split.CheckMappings(slot, slot); err != nil {
		t.Errorf("a slot: %v", err)
	}
}

func TestResolveAcceptedBind(t *testing.T) {
	p := Policy{Binds: Binds{ReadOnly: []string{"/var"}}, Accept: []Acceptance{{Code: "system-directory-mounted", Subject: "/var", Reason: "logs for debugging"}}}
	plan, err := resolve(t, p, []string{"sh"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := mountsOf(plan, KindExtra); len(got) != 1 || got[0].Source != "/var" || !got[0].ReadOnly {
		t.Errorf("extra mounts: %+v", got)
	}
}

func TestResolveMissingRuntimeIsAHostError(t *testing.T) {
	_, err := resolve(t, Policy{Runtime: "crun"}, []string{"sh"}, nil)
	var he *HostError
	if !errors.As(err, &he) || !strings.Contains(err.Error(), "apt-get install crun") {
		t.Errorf("err = %v, want a HostError naming the package", err)
	}
}

func TestResolveInstallPrefix(t *testing.T) {
	tests := []struct {
		name      string
		setup     func(*fakeFS, *Host)
		argv      string
		wantBinds []string
		wantPath  string
	}{
		{
			name: "nvm",
			setup: func(f *fakeFS, h *Host) {
				for _, d := range []string{"/home/ana/.nvm", "/home/ana/.nvm/versions", "/home/ana/.nvm/versions/node", "/home/ana/.nvm/versions/node/v20", "/home/ana/.nvm/versions/node/v20/bin", "/home/ana/.nvm/versions/node/v20/lib", "/home/ana/.nvm/versions/node/v20/lib/node_modules", "/home/ana/.nvm/versions/node/v20/lib/node_modules/codex", "/home/ana/.nvm/versions/node/v20/lib/node_modules/codex/bin"} {
					f.dir(d, 1000, 1000)
				}
				f.file("/home/ana/.nvm/versions/node/v20/lib/node_modules/codex/bin/codex.js", 0o755, 1000)
				f.link("/home/ana/.nvm/versions/node/v20/bin/codex", "../lib/node_modules/codex/bin/codex.js")
				f.path["codex"] = "/home/ana/.nvm/versions/node/v20/bin/codex"
			},
			argv:      "codex",
			wantBinds: []string{"/home/ana/.nvm/versions/node/v20"},
			wantPath:  "/home/ana/.nvm/versions/node/v20/bin:" + SystemPath,
		},
		{
			name: "pipx under ~/.local",
			setup: func(f *fakeFS, h *Host) {
				h.Home = "/home/ana"
				for _, d := range []string{"/home/ana/.local", "/home/ana/.local/bin", "/home/ana/.local/share", "/home/ana/.local/share/pipx", "/home/ana/.local/share/pipx/venvs", "/home/ana/.local/share/pipx/venvs/aider", "/home/ana/.local/share/pipx/venvs/aider/bin"} {
					f.dir(d, 1000, 1000)
				}
				f.file("/home/ana/.local/share/pipx/venvs/aider/bin/aider", 0o755, 1000)
				f.link("/home/ana/.local/bin/aider", "/home/ana/.local/share/pipx/venvs/aider/bin/aider")
				f.path["aider"] = "/home/ana/.local/bin/aider"
			},
			argv:      "aider",
			wantBinds: []string{"/home/ana/.local/bin", "/home/ana/.local/share/pipx/venvs/aider"},
			wantPath:  "/home/ana/.local/bin:" + SystemPath,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan, err := resolve(t, Policy{}, []string{tt.argv}, tt.setup)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range mountsOf(plan, KindInstall) {
				if !m.ReadOnly {
					t.Errorf("install prefix %s is writable", m.Source)
				}
				got = append(got, m.Source)
			}
			if d := cmp.Diff(tt.wantBinds, got); d != "" {
				t.Errorf("install binds (-want +got):\n%s", d)
			}
			if plan.Env[0] != "PATH="+tt.wantPath {
				t.Errorf("%s, want PATH=%s", plan.Env[0], tt.wantPath)
			}
		})
	}
}

func TestResolveWithoutLimits(t *testing.T) {
	plan, err := resolve(t, Policy{}, []string{"sh"}, func(_ *fakeFS, h *Host) { h.CanLimit, h.LimitReason = false, "cgroup v1" })
	if err != nil {
		t.Fatal(err)
	}
	if plan.Limits != nil {
		t.Errorf("limits %+v on a host that cannot apply them", plan.Limits)
	}
	found := false
	for _, r := range plan.Residuals {
		found = found || (r.Code == "no-resource-limits" && strings.Contains(r.Reason, "cgroup v1"))
	}
	if !found {
		t.Errorf("residuals %+v: a dropped limit must be recorded", plan.Residuals)
	}
}

func TestResolveImageRoot(t *testing.T) {
	plan, err := resolve(t, Policy{Rootfs: "/srv/img"}, []string{"sh"}, func(f *fakeFS, _ *Host) {
		for _, d := range []string{"/srv/img", "/srv/img/etc", "/srv/img/bin", "/srv/img/proc", "/srv/img/home"} {
			f.dir(d, 0, 0)
		}
		f.file("/srv/img/etc/passwd", 0o644, 0)
		f.file("/srv/img/etc/hosts", 0o644, 0)
		f.link("/srv/img/bin/sh", "busybox")
		f.link("/srv/img/lib", "usr/lib")
	})
	if err != nil {
		t.Fatal(err)
	}
	if plan.Command[0] != "/bin/sh" || plan.Rootfs.Image != "/srv/img" {
		t.Errorf("command %v image %q", plan.Command, plan.Rootfs.Image)
	}
	var dests []string
	for _, m := range plan.Mounts {
		if m.Kind == KindSystem || m.Kind == KindFile {
			dests = append(dests, m.Destination+"<-"+m.Source)
		}
	}
	want := []string{"/bin<-/srv/img/bin", "/etc<-/srv/img/etc", "/etc/hosts<-/run/agentbox/runs/R/bundle/files/etc/hosts", "/etc/passwd<-/run/agentbox/runs/R/bundle/files/etc/passwd"}
	if d := cmp.Diff(want, dests); d != "" {
		t.Errorf("image mounts (-want +got):\n%s", d)
	}
	if plan.Rootfs.Symlinks["/lib"] != "usr/lib" || !strings.Contains(plan.Rootfs.Files["/etc/passwd"], "agent:x:1000") {
		t.Errorf("rootfs %+v", plan.Rootfs)
	}
	if _, ok := plan.Rootfs.Files["/etc/group"]; ok {
		t.Errorf("the image has no /etc/group; nothing may be bound there")
	}
}

func TestResolveLSM(t *testing.T) {
	tests := []struct {
		name     string
		set      func(*Host)
		want     LSM
		residual string
	}{
		{
			"selinux", func(h *Host) {
				h.SELinux, h.SELinuxLabels = true, [2]string{"system_u:system_r:container_t:s0:c1,c2", "system_u:object_r:container_file_t:s0:c1,c2"}
			},
			LSM{Kind: LSMSELinux, ProcessLabel: "system_u:system_r:container_t:s0:c1,c2", MountLabel: "system_u:object_r:container_file_t:s0:c1,c2"},
			"",
		},
		{"apparmor as root", func(h *Host) { h.AppArmor, h.AppArmorReady = true, true }, LSM{Kind: LSMAppArmor, AppArmorProfile: AppArmorProfile}, ""},
		{"apparmor profile missing", func(h *Host) { h.AppArmor = true }, LSM{Kind: LSMNone}, "apparmor-profile-not-loaded"},
		{"neither", func(*Host) {}, LSM{Kind: LSMNone}, "lsm-unavailable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan, err := resolve(t, Policy{}, []string{"sh"}, func(_ *fakeFS, h *Host) { tt.set(h) })
			if err != nil {
				t.Fatal(err)
			}
			if plan.LSM != tt.want {
				t.Errorf("LSM %+v, want %+v", plan.LSM, tt.want)
			}
			got := ""
			for _, r := range plan.Residuals {
				if r.Code != "workspace-socket-after-launch" { // TestCoverSockets
					got = r.Code
				}
			}
			if got != tt.residual {
				t.Errorf("residual %q, want %q", got, tt.residual)
			}
		})
	}
}

// agentbox-init runs as uid 0 of the user namespace, with only InitCaps,
// wherever 0 is mapped apart from the agent; with one id mapped (rootless
// without subordinate ids) it shares the agent's ids, and the residual says
// which probes that makes report ALLOW.
func TestInitIdentity(t *testing.T) {
	single := func(_ *fakeFS, h *Host) {
		h.EUID, h.EGID, h.InitPath = 1000, 1000, "/opt/agentbox-init"
		h.SubIDs = SubIDs{User: "ana", UID: IDRange{Start: 200000, Count: 65536}, GID: IDRange{Start: 200000, Count: 65536}} // no newuidmap
	}
	subids := func(f *fakeFS, h *Host) {
		single(f, h)
		h.SubIDs.NewIDMap = true
	}
	tests := []struct {
		name      string
		setup     func(*fakeFS, *Host)
		split     bool
		uid, gid  uint32
		caps      []string
		cwd       string
		residuals int
	}{
		{"root-owned workspace", func(_ *fakeFS, h *Host) { h.InitPath = "/opt/agentbox-init" }, true, 0, 0, InitCaps, "/", 0},
		{"owner kept", func(f *fakeFS, h *Host) { f.dir("/srv/proj", 1000, 1000); h.InitPath = "/opt/agentbox-init" }, true, 0, 0, InitCaps, "/", 0},
		{"rootless single id", single, false, 0, 0, nil, "/srv/proj", 1},
		{"rootless with subordinate ids", subids, true, 0, 0, InitCaps, "/", 0},
		{"no init: the agent is the first process", nil, true, 1000, 1000, nil, "/srv/proj", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan, err := resolve(t, Policy{}, []string{"sh"}, tt.setup)
			if err != nil {
				t.Fatal(err)
			}
			uid, gid, caps := plan.ProcessUser()
			if plan.Identity.Init.Split != tt.split || uid != tt.uid || gid != tt.gid || !cmp.Equal(caps, tt.caps, cmpopts.EquateEmpty()) || plan.ProcessCwd() != tt.cwd {
				t.Errorf("init %+v: process %d:%d caps %v cwd %s; want split=%v %d:%d %v %s", plan.Identity.Init, uid, gid, caps, plan.ProcessCwd(), tt.split, tt.uid, tt.gid, tt.caps, tt.cwd)
			}
			var shared []Residual
			for _, r := range plan.Residuals {
				if r.Code == ResidualRootlessSingle {
					shared = append(shared, r)
				}
			}
			if len(shared) != tt.residuals {
				t.Fatalf("residuals %+v: want %d %s", plan.Residuals, tt.residuals, ResidualRootlessSingle)
			}
			if len(shared) == 1 && !cmp.Equal(shared[0].Probes, InitSharedProbes) {
				t.Errorf("residual names probes %v, want %v", shared[0].Probes, InitSharedProbes)
			}
		})
	}
}

// The plan places a root launcher's sandbox in a cgroup of its run's own
// and none rootless or for a plan of no run, and names the seccomp
// profile: decisions of the plan, not of the renderers.
func TestResolveCgroupAndSeccomp(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  Run
		euid uint32
		want string
	}{
		{"root", Run{ID: "R", Bundle: "/run/agentbox/runs/R/bundle"}, 0, "/agentbox/R"},
		{"spec", Run{ID: RunIDPlaceholder}, 0, "/agentbox/RUN_ID"},
		{"rootless", Run{ID: "R"}, 1000, ""},
		{"no run", Run{}, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeFS()
			f.dir("/srv/proj", tc.euid, tc.euid)
			h := testHost(f)
			h.EUID, h.EGID = tc.euid, tc.euid
			plan, err := Resolve(Policy{}, []string{"sh"}, h, tc.run)
			if err != nil {
				t.Fatal(err)
			}
			if plan.CgroupsPath != tc.want || plan.Seccomp != "agentbox" {
				t.Errorf("cgroup %q, seccomp %q; want %q and agentbox", plan.CgroupsPath, plan.Seccomp, tc.want)
			}
		})
	}
}
