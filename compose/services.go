package compose

import (
	"fmt"
	"strings"

	"github.com/compose-spec/compose-go/v2/types"

	"github.com/agentbox/agentbox/agents"
	"github.com/agentbox/agentbox/policy"
)

// roleLabel marks each service with its part in the project.
const roleLabel = "io.agentbox.role"

// plannedEnv are plan variables the image, not the plan, defines in a
// compose project (HOME is set from the plan's identity explicitly).
var plannedEnv = map[string]bool{"PATH": true, "HOME": true, "USER": true, "LOGNAME": true}

// agentService is the plan, translated: identity, limits, mounts and
// environment, with every hardening option compose can express.
func (r *renderer) agentService(seccompPath string) types.ServiceConfig {
	p, id := r.plan, r.plan.Identity
	s := types.ServiceConfig{Name: AgentService}
	c := &s.ContainerSpec
	c.Image = r.o.Image
	c.Command = types.ShellCommand(r.launch.Argv)
	c.User = fmt.Sprintf("%d:%d", id.UID, id.GID)
	c.Hostname = p.Hostname
	c.WorkingDir = p.Cwd
	c.Init = ptr(true)
	hardenContainer(c, seccompPath)
	if p.LSM.Kind == policy.LSMAppArmor {
		c.SecurityOpt = append(c.SecurityOpt, "apparmor="+p.LSM.AppArmorProfile)
	}
	if l := p.Limits; l != nil {
		c.MemLimit, c.MemSwapLimit = types.UnitBytes(l.MemoryBytes), types.UnitBytes(l.MemoryBytes)
		c.PidsLimit = l.Pids
		c.CPUShares = int64(l.CPUWeight * 1024 / 100) // as spec.WithLimits on cgroup v1
	}
	r.mounts(c)
	c.Environment = r.agentEnv()
	c.Networks = map[string]*types.ServiceNetworkConfig{SandboxNetwork: nil}
	c.Labels = r.agentLabels()
	s.DependsOn = types.DependsOnConfig{GatewayService: {Condition: types.ServiceConditionStarted, Required: true}}
	s.StdinOpen, s.Tty = true, true
	return s
}

// agentLabels are the agent's role, the host path of its workspace bind
// (policy.WorkspaceLabel), so that `agentbox audit CONTAINER` knows which
// bind the workspace is, and the residual every compose project accepts
// (UserNSReason).
func (r *renderer) agentLabels() types.Labels {
	ls := types.Labels{roleLabel: "agent", policy.AcceptLabel(policy.CodeNoUserNS): UserNSReason}
	for _, m := range r.plan.Mounts {
		if m.Kind == policy.KindWorkspace {
			ls[policy.WorkspaceLabel] = m.Source
			break
		}
	}
	return ls
}

// hardenContainer sets what both services share: a read-only root, no
// capabilities, no-new-privileges and agentbox's seccomp profile.
func hardenContainer(c *types.ContainerSpec, seccompPath string) {
	c.ReadOnly = true
	c.CapDrop = []string{"ALL"}
	c.SecurityOpt = []string{"no-new-privileges:true", "seccomp=" + seccompPath}
}

// mounts translates the plan's workspace, extra binds and tmpfs mounts.
// System, /etc, install and runtime mounts build the launcher's own root;
// in compose the image is the root, so they have no counterpart.
func (r *renderer) mounts(c *types.ContainerSpec) {
	var binds []policy.Mount
	for _, m := range r.plan.Mounts {
		switch m.Kind {
		case policy.KindWorkspace, policy.KindExtra:
			c.Volumes = append(c.Volumes, types.ServiceVolumeConfig{Type: types.VolumeTypeBind, Source: m.Source, Target: m.Destination, ReadOnly: m.ReadOnly})
			binds = append(binds, m)
		case policy.KindTmpfs:
			c.Tmpfs = append(c.Tmpfs, tmpfs(m))
		default: // system, /etc, install, file and runtime mounts: the image is the root
		}
	}
	for _, m := range binds {
		if within(r.o.OutDir, m.Source) {
			// The agent must not read the key files nor edit the project it is
			// started from: an empty read-only tmpfs hides the directory.
			inside := m.Destination + strings.TrimPrefix(r.o.OutDir, m.Source)
			c.Tmpfs = append(c.Tmpfs, inside+":ro,nosuid,nodev,noexec,size=4k,mode=0555")
			break
		}
	}
}

// tmpfs writes a plan tmpfs in compose's short syntax. Docker mounts a
// tmpfs noexec unless told otherwise; the plan's tmpfs mounts are nosuid and
// nodev but executable, as in the OCI spec agentbox runs.
func tmpfs(m policy.Mount) string {
	opts := append([]string{"nosuid", "nodev", "exec"}, m.Options...)
	if m.ReadOnly {
		opts = append(opts, "ro")
	}
	return m.Destination + ":" + strings.Join(opts, ",")
}

// agentEnv is the agent's whole environment: the allowlisted names of the
// plan, passed through by name from whoever runs compose; HOME; what the
// agent's adapter sets to reach the gateway (its URL, proxy and key
// variables, all carrying the per-sandbox key, never a real one); and
// AGENT_GATEWAY_KEY. The gateway is reached by its service name, which the
// proxy variables must skip.
func (r *renderer) agentEnv() types.MappingWithEquals {
	env := types.MappingWithEquals{}
	for _, kv := range r.plan.Env {
		name, _, _ := strings.Cut(kv, "=")
		if !plannedEnv[name] {
			env[name] = nil
		}
	}
	env["HOME"] = ptr(r.plan.Identity.Home)
	for k, v := range r.launch.Env {
		env[k] = ptr(v)
	}
	for _, k := range []string{"NO_PROXY", "no_proxy"} {
		if _, ok := r.launch.Env[k]; ok {
			env[k] = ptr(GatewayService + "," + agents.NoProxy)
		}
	}
	env[KeyEnv] = ptr(r.o.Token)
	return env
}

// gatewayService runs `agentbox gateway` from the locally built image,
// hardened like the agent, on both networks.
func (r *renderer) gatewayService(seccompPath string) types.ServiceConfig {
	s := types.ServiceConfig{Name: GatewayService}
	c := &s.ContainerSpec
	c.Image = r.out.GatewayImage
	c.Entrypoint = types.ShellCommand{"/agentbox", "gateway"}
	c.Command = types.ShellCommand{"--config", gatewayConfigPath}
	uid, gid := r.o.gatewayIDs()
	c.User = fmt.Sprintf("%d:%d", uid, gid)
	hardenContainer(c, seccompPath)
	c.MemLimit, c.MemSwapLimit, c.PidsLimit = GatewayMemory, GatewayMemory, GatewayPids
	c.Volumes = []types.ServiceVolumeConfig{{Type: types.VolumeTypeBind, Source: "./" + GatewayFile, Target: gatewayConfigPath, ReadOnly: true}}
	c.Environment = types.MappingWithEquals{KeyEnv: ptr(r.o.Token)}
	for _, route := range r.keyedRoutes() {
		c.Secrets = append(c.Secrets, types.ServiceSecretConfig{Source: secretName(route)})
	}
	c.Networks = map[string]*types.ServiceNetworkConfig{SandboxNetwork: nil, EgressNetwork: nil}
	c.Labels = types.Labels{roleLabel: "gateway", policy.AcceptLabel(policy.CodeNoUserNS): UserNSReason}
	s.Build = &types.BuildConfig{Context: "./" + BuildDir}
	return s
}

func ptr[T any](v T) *T { return &v }
