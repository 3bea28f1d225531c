package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/agentbox/agentbox/engine"
	"github.com/agentbox/agentbox/policy"
)

// runIDPlaceholder is how `agentbox spec`, which runs nothing, names the
// run that does not exist: in the cgroup and in per-run file paths.
const runIDPlaceholder = "RUN_ID"

// baselineSpec returns a copy of s, the config.json `agentbox spec` prints,
// with only agentbox's own parts taken out, so that the runtime runs argv
// directly: the process is argv instead of agentbox-init, the read-only
// bind of agentbox-init is gone, it has no hooks, and the cgroup is
// cgroupsPath. A bind whose source is a per-run file of agentbox (the
// gateway's socket, under the run directory) is kept, from a stand-in
// file under standins instead, so that the mounts stay the same. Masked
// and read-only paths, namespaces, id maps, seccomp, capabilities,
// rlimits, limits and the environment stay as they are. It returns the
// stand-in paths to create and a line per change, for the report.
func baselineSpec(s *specs.Spec, argv []string, cgroupsPath, standins string) (*specs.Spec, []string, []string, error) {
	if s == nil || s.Process == nil || len(s.Process.Args) == 0 || s.Linux == nil || s.Root == nil {
		return nil, nil, nil, errors.New("spec has no process, root or linux section")
	}
	var c specs.Spec
	data, err := json.Marshal(s)
	if err == nil {
		err = json.Unmarshal(data, &c)
	}
	if err != nil {
		return nil, nil, nil, fmt.Errorf("copy spec: %w", err)
	}
	init := c.Process.Args[0]
	changes := []string{fmt.Sprintf("process %q instead of %q", argv, c.Process.Args)}
	c.Process.Args = argv
	var created []string
	kept := c.Mounts[:0]
	for _, m := range c.Mounts {
		switch {
		case m.Destination == init:
			changes = append(changes, fmt.Sprintf("no bind of %s at %s", m.Source, m.Destination))
			continue
		case m.Type == "bind" && strings.Contains(m.Source, "/"+runIDPlaceholder+"/"):
			standin := filepath.Join(standins, filepath.Base(m.Source))
			changes = append(changes, fmt.Sprintf("%s bound from an empty stand-in file instead of %s", m.Destination, m.Source))
			m.Source = standin
			created = append(created, standin)
		}
		kept = append(kept, m)
	}
	c.Mounts = kept
	if c.Hooks != nil {
		changes = append(changes, "no hooks")
		c.Hooks = nil
	}
	changes = append(changes, fmt.Sprintf("cgroup %s instead of %s", cgroupsPath, c.Linux.CgroupsPath))
	c.Linux.CgroupsPath = cgroupsPath
	return &c, created, changes, nil
}

// writeBaseline writes the baseline bundle into dir with the same writer
// agentbox uses, and the same root: the host's merged-/usr symlinks and a
// synthesized /etc of the same files. It is written once, before timing;
// agentbox writes its bundle on every launch and that is part of its time.
func writeBaseline(dir string, s *specs.Spec, standins []string) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	for _, p := range standins {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			return err
		}
	}
	root := policy.Rootfs{Symlinks: map[string]string{}, Files: etcFiles(s.Process.User.UID, s.Process.User.GID)}
	for _, d := range policy.HostSystemDirs {
		if fi, err := os.Lstat(d); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			if root.Symlinks[d], err = os.Readlink(d); err != nil {
				return err
			}
		}
	}
	return engine.WriteBundle(dir, s, root)
}

// etcFiles are the files agentbox synthesizes in its root's /etc (see
// policy.Resolve), with the agent user.
func etcFiles(uid, gid uint32) map[string]string {
	return map[string]string{
		"/etc/hosts":         "127.0.0.1\tlocalhost " + policy.Hostname + "\n::1\tlocalhost ip6-localhost ip6-loopback\n",
		"/etc/hostname":      policy.Hostname + "\n",
		"/etc/nsswitch.conf": "passwd: files\ngroup: files\nshadow: files\nhosts: files\nnetworks: files\nprotocols: files\nservices: files\n",
		"/etc/resolv.conf":   "",
		"/etc/passwd":        fmt.Sprintf("root:x:0:0:root:/root:/usr/sbin/nologin\n%s:x:%d:%d:agentbox agent:%s:/bin/sh\n", policy.AgentUser, uid, gid, policy.AgentHome),
		"/etc/group":         fmt.Sprintf("root:x:0:\n%s:x:%d:\n", policy.AgentUser, gid),
	}
}
