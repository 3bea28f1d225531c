package spec

import (
	"fmt"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/agentbox/agentbox/policy"
)

// bindOptions are the flags of every bind: never recursive (a submount of a
// bound directory stays out), never a device node, never a setuid binary.
var bindOptions = []string{"bind", "nosuid", "nodev"}

// WithMounts appends the plan's binds and tmpfs mounts after the kernel
// file systems, in the plan's order.
func WithMounts(ms []policy.Mount) Opt {
	return func(s *specs.Spec) error {
		for _, m := range ms {
			om, err := ociMount(m)
			if err != nil {
				return err
			}
			s.Mounts = append(s.Mounts, om)
		}
		return nil
	}
}

func ociMount(m policy.Mount) (specs.Mount, error) {
	if m.Destination == "" || m.Destination[0] != '/' {
		return specs.Mount{}, fmt.Errorf("mount %+v: destination must be absolute", m)
	}
	if m.Kind == policy.KindTmpfs {
		opts := append([]string{"nosuid", "nodev"}, m.Options...)
		if m.ReadOnly {
			opts = append(opts, "ro")
		}
		return specs.Mount{Destination: m.Destination, Type: "tmpfs", Source: "tmpfs", Options: opts}, nil
	}
	if m.Source == "" {
		return specs.Mount{}, fmt.Errorf("bind of %s: no source", m.Destination)
	}
	opts := append(append([]string(nil), bindOptions...), m.Options...)
	if m.ReadOnly {
		opts = append(opts, "ro")
	} else {
		opts = append(opts, "rw")
	}
	return specs.Mount{Destination: m.Destination, Type: "bind", Source: m.Source, Options: opts}, nil
}
