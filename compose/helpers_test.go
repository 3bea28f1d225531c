package compose

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/agentbox/agentbox/policy"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// testToken has a gateway token's shape; it is not a secret.
const testToken = "agentbox-gw-TESTTOKEN0123456789abcdefTESTTOKEN0123456789ab"

// fakeELF returns a minimal 64-bit little-endian ELF executable for machine,
// with a PT_INTERP program header when dynamic is true.
func fakeELF(machine elf.Machine, dynamic bool) []byte {
	var b bytes.Buffer
	phnum := uint16(0)
	if dynamic {
		phnum = 1
	}
	hdr := elf.Header64{
		Type: uint16(elf.ET_EXEC), Machine: uint16(machine), Version: uint32(elf.EV_CURRENT),
		Phoff: 64, Ehsize: 64, Phentsize: 56, Phnum: phnum,
	}
	copy(hdr.Ident[:], elf.ELFMAG)
	hdr.Ident[elf.EI_CLASS], hdr.Ident[elf.EI_DATA], hdr.Ident[elf.EI_VERSION] = byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), byte(elf.EV_CURRENT)
	binary.Write(&b, binary.LittleEndian, hdr)
	if dynamic {
		interp := []byte("/lib64/ld-linux-x86-64.so.2\x00")
		binary.Write(&b, binary.LittleEndian, elf.Prog64{Type: uint32(elf.PT_INTERP), Off: 120, Filesz: uint64(len(interp)), Memsz: uint64(len(interp))})
		b.Write(interp)
	}
	return b.Bytes()
}

// testPlan is a plan as policy.Resolve makes it for a root-run compose
// project in ws, owned by uid 1000 (see PlanHost).
func testPlan(ws string) *policy.Plan {
	keep := uint32(1000)
	return &policy.Plan{
		Command:   []string{"/bin/sh"},
		Env:       []string{"PATH=" + policy.SystemPath, "HOME=/home/agent", "USER=agent", "LOGNAME=agent", "TERM=xterm-256color", "LANG=C.UTF-8"},
		Cwd:       ws,
		Workspace: ws,
		Identity: policy.Identity{UID: 1000, GID: 1000, User: "agent", Home: "/home/agent", KeepUID: &keep, KeepGID: &keep,
			UIDMappings: []specs.LinuxIDMapping{{ContainerID: 1000, HostID: 1000, Size: 1}},
			GIDMappings: []specs.LinuxIDMapping{{ContainerID: 1000, HostID: 1000, Size: 1}}},
		Hostname: policy.Hostname,
		Rootfs:   policy.Rootfs{Symlinks: map[string]string{"/bin": "usr/bin"}},
		Mounts: []policy.Mount{
			{Kind: policy.KindEtc, Source: "/etc/ssl/certs", Destination: "/etc/ssl/certs", ReadOnly: true},
			{Kind: policy.KindTmpfs, Destination: "/home/agent", Options: []string{"mode=0700", "uid=1000", "gid=1000"}},
			{Kind: policy.KindTmpfs, Destination: "/tmp", Options: []string{"mode=1777"}},
			{Kind: policy.KindSystem, Source: "/usr", Destination: "/usr", ReadOnly: true},
			{Kind: policy.KindWorkspace, Source: ws, Destination: ws},
		},
		Limits:    &policy.ResolvedLimits{MemoryBytes: 4 << 30, Pids: 512, CPUWeight: 100},
		LSM:       policy.LSM{Kind: policy.LSMNone},
		Runtime:   policy.Runtime{Name: "runc", Path: "/usr/sbin/runc"},
		Residuals: []policy.Residual{{Code: "lsm-unavailable", Reason: "neither SELinux nor AppArmor is enabled on this host"}},
	}
}

// testOptions renders into ws/agentbox-compose with fixed inputs.
func testOptions(ws string, command ...string) Options {
	return Options{
		Command:       command,
		Image:         "example.org/agents/codex:1",
		OutDir:        filepath.Join(ws, "agentbox-compose"),
		Token:         testToken,
		GatewayBinary: fakeELF(elf.EM_X86_64, false),
		CABundle:      []byte("-----BEGIN CERTIFICATE-----\nnot a certificate\n-----END CERTIFICATE-----\n"),
		Arch:          specs.ArchX86_64,
	}
}

// golden compares got with testdata/golden/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./compose -update to create it)", err)
	}
	if d := cmp.Diff(string(want), string(got)); d != "" {
		t.Errorf("%s differs from the golden file (-want +got; run with -update if the change is intended):\n%s", name, d)
	}
}
