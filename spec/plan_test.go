package spec

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/agentbox/agentbox/policy"
	"github.com/agentbox/agentbox/seccomp/profiles"
	specs "github.com/opencontainers/runtime-spec/specs-go"
)

var update = flag.Bool("update", false, "rewrite golden files")

// defaultPlan is what policy.Resolve produces for the zero policy, a
// root-owned workspace and `sh`, on a merged-/usr amd64 host: agentbox-init
// is the first process, as uid 0 of the user namespace with InitCaps.
func defaultPlan() *policy.Plan {
	maps := []specs.LinuxIDMapping{{ContainerID: 0, HostID: 100000, Size: 65536}}
	return &policy.Plan{
		Command:   []string{"/usr/bin/sh"},
		Init:      policy.InitPath,
		Env:       []string{"PATH=" + policy.SystemPath, "HOME=/home/agent", "USER=agent", "LOGNAME=agent", "TERM=xterm"},
		Cwd:       "/srv/proj",
		Workspace: "/srv/proj",
		Identity: policy.Identity{
			UID: 1000, GID: 1000, User: "agent", Home: "/home/agent", GrantWorkspace: true, UIDMappings: maps, GIDMappings: maps,
			Init: policy.InitIdentity{Split: true, Caps: policy.InitCaps},
		},
		Hostname: "agentbox",
		Rootfs:   policy.Rootfs{Symlinks: map[string]string{"/bin": "usr/bin"}, Files: map[string]string{"/etc/hosts": "127.0.0.1\tlocalhost\n"}},
		Mounts: []policy.Mount{
			{Kind: policy.KindEtc, Source: "/etc/ssl/certs", Destination: "/etc/ssl/certs", ReadOnly: true},
			{Kind: policy.KindTmpfs, Destination: "/home/agent", Options: []string{"mode=0700", "uid=1000", "gid=1000"}},
			{Kind: policy.KindWorkspace, Source: "/srv/proj", Destination: "/srv/proj"},
			{Kind: policy.KindTmpfs, Destination: "/tmp", Options: []string{"mode=1777"}},
			{Kind: policy.KindSystem, Source: "/usr", Destination: "/usr", ReadOnly: true},
		},
		Limits:  &policy.ResolvedLimits{MemoryBytes: 4 << 30, Pids: 512, CPUWeight: 100},
		LSM:     policy.LSM{Kind: policy.LSMNone},
		Runtime: policy.Runtime{Name: "runc", Path: "/usr/sbin/runc"},
	}
}

func renderDefault(t *testing.T) []byte {
	t.Helper()
	s, err := FromPlan(defaultPlan(), Extras{
		Seccomp:     profiles.Default().OCI(specs.ArchX86_64),
		CgroupsPath: "/agentbox/RUN_ID",
	})
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.MarshalIndent(s, "", "\t")
	if err != nil {
		t.Fatal(err)
	}
	return append(data, '\n')
}

func TestGoldenDefaultConfig(t *testing.T) {
	got := renderDefault(t)
	golden := filepath.Join("testdata", "default-config.json")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./spec -update to create it)", err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("config.json differs from %s; review the change and run go test ./spec -update", golden)
	}
}

// The generated config validates against the runtime-spec's own schema.
func TestConfigMatchesRuntimeSpecSchema(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join("testdata", "runtime-spec-schema"))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft4) // the runtime-spec schemas are draft-04; not all of them say so
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	for _, f := range files {
		r, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(r)
		r.Close()
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if err := c.AddResource("file://"+f, doc); err != nil {
			t.Fatal(err)
		}
	}
	sch, err := c.Compile("file://" + filepath.Join(dir, "config-schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(renderDefault(t)))
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(inst); err != nil {
		t.Errorf("generated config.json is not valid per the runtime-spec schema:\n%v", err)
	}
	// The schema must be able to fail: a config without ociVersion is invalid.
	var broken map[string]any
	_ = json.Unmarshal(renderDefault(t), &broken)
	delete(broken, "ociVersion")
	if err := sch.Validate(broken); err == nil {
		t.Error("schema accepted a config without ociVersion; the validation proves nothing")
	}
}
