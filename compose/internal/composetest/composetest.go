// Package composetest holds the fixtures that the tests of compose and
// compose/check share: a plan as policy.Resolve makes it for a compose
// project, a minimal static ELF binary for the gateway image, and a token.
// It imports neither package, so both can use it in their own tests.
package composetest

import (
	"bytes"
	"debug/elf"
	"encoding/binary"

	"github.com/agentbox/agentbox/policy"
)

// Token has a gateway token's shape; it is not a secret.
const Token = "agentbox-gw-TESTTOKEN0123456789abcdefTESTTOKEN0123456789ab"

// CABundle stands in for the host's CA bundle.
var CABundle = []byte("-----BEGIN CERTIFICATE-----\nnot a certificate\n-----END CERTIFICATE-----\n")

// ELF returns a minimal 64-bit little-endian ELF executable for machine,
// with a PT_INTERP program header (a dynamic binary) when dynamic is true.
func ELF(machine elf.Machine, dynamic bool) []byte {
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
	_ = binary.Write(&b, binary.LittleEndian, hdr)
	if dynamic {
		interp := []byte("/lib64/ld-linux-x86-64.so.2\x00")
		_ = binary.Write(&b, binary.LittleEndian, elf.Prog64{Type: uint32(elf.PT_INTERP), Off: 120, Filesz: uint64(len(interp)), Memsz: uint64(len(interp))})
		b.Write(interp)
	}
	return b.Bytes()
}

// Plan is a plan as policy.Resolve makes it for a root-run compose project
// in ws, owned by uid 1000 (see compose.PlanHost): system and /etc binds
// that compose has no use for, the tmpfs mounts, the workspace.
func Plan(ws string) *policy.Plan {
	keep := uint32(1000)
	return &policy.Plan{
		Command:   []string{"/bin/sh"},
		Env:       []string{"PATH=" + policy.SystemPath, "HOME=/home/agent", "USER=agent", "LOGNAME=agent", "TERM=xterm-256color", "LANG=C.UTF-8"},
		Cwd:       ws,
		Workspace: ws,
		Identity: policy.Identity{
			UID: 1000, GID: 1000, User: "agent", Home: "/home/agent", KeepUID: &keep, KeepGID: &keep,
			IDMap: policy.IDMap{Mode: policy.IDEngine},
		},
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
		Seccomp:   "agentbox",
		Residuals: []policy.Residual{{Code: "lsm-unavailable", Reason: "neither SELinux nor AppArmor is enabled on this host"}},
	}
}
