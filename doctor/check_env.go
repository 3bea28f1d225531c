package doctor

import (
	"fmt"
	"strconv"
	"strings"
)

func checkContainer(f *Facts) []Result {
	c := f.Container
	r := Result{ID: "container"}
	switch {
	case len(c.Evidence) > 0:
		r.Status = Warn
		r.Detail = "doctor runs inside a container (" + strings.Join(append(c.Evidence, c.Markers...), "; ") + "): the sandbox nests in it, and the outer container's own configuration is part of what the agent could reach"
		r.Fix = "run agentbox on the host or in a VM; if it must nest, audit the outer container from its host: agentbox audit CONTAINER"
	case len(c.Markers) > 0:
		r.Status = Unknown
		r.Detail = strings.Join(c.Markers, "; ") + ", but nothing else says container: PID 1's cgroup names no engine and the root filesystem is not an overlay (a VM or host image built from a container image keeps such files)"
		r.Fix = "systemd-detect-virt --container"
	default:
		r.Status, r.Detail = Pass, "not inside a container"
	}
	return []Result{r}
}

func checkVM(f *Facts) []Result {
	v := f.VM
	what := strings.TrimSpace(v.Vendor + " " + v.Product)
	switch {
	case v.Hypervisor && what != "":
		return []Result{{ID: "vm", Status: Pass, Detail: "runs in a virtual machine (" + what + "): the hypervisor is a boundary beneath agentbox's"}}
	case v.Hypervisor:
		return []Result{{ID: "vm", Status: Pass, Detail: "runs in a virtual machine (the CPU reports a hypervisor; no DMI data): the hypervisor is a boundary beneath agentbox's"}}
	}
	return []Result{{ID: "vm", Status: Pass, Detail: "no hypervisor detected: the host kernel is the last boundary"}}
}

func checkDocker(f *Facts) []Result {
	d := f.Docker
	if !d.Installed {
		return []Result{{ID: "docker", Status: Pass, Detail: "the Docker engine is not installed"}}
	}
	return append(dockerSocketResults(d), dockerConfigResults(d)...)
}

func dockerSocketResults(d DockerFacts) []Result {
	if !d.SocketFound {
		return []Result{{ID: "docker-socket", Status: Pass, Detail: "dockerd is installed but no socket exists at " + d.Socket + " (the engine is not running)"}}
	}
	sock := Result{ID: "docker-socket", Status: Pass, Detail: fmt.Sprintf("%s is mode %s, owner %s, group %s", d.Socket, d.SocketMode, d.SocketOwner, d.SocketGroup)}
	if mode, err := strconv.ParseUint(d.SocketMode, 8, 32); err == nil && mode&0o002 != 0 {
		sock.Status = Warn
		sock.Detail += ": every local user can drive the engine, which is root on this host"
		sock.Fix = "chmod 660 " + d.Socket
	}
	group := Result{ID: "docker-group", Status: Pass, Detail: "group " + d.SocketGroup + " has no members"}
	if len(d.Members) > 0 {
		group.Status = Warn
		group.Detail = fmt.Sprintf("members of group %s are root-equivalent on this host (they can start a privileged container): %s", d.SocketGroup, strings.Join(d.Members, ", "))
		var fixes []string
		for _, m := range d.Members {
			fixes = append(fixes, "gpasswd -d "+m+" "+d.SocketGroup)
		}
		group.Fix = strings.Join(fixes, " && ") + " (give them rootless Docker instead: https://docs.docker.com/engine/security/rootless/)"
	}
	return []Result{sock, group}
}

// dockerDaemonFile is the engine's configuration file.
const dockerDaemonFile = "/etc/docker/daemon.json"

func dockerConfigResults(d DockerFacts) []Result {
	if d.ConfigErr != "" {
		return []Result{{ID: "docker-config", Status: Unknown, Detail: "cannot read " + dockerDaemonFile + ": " + d.ConfigErr, Fix: "python3 -m json.tool " + dockerDaemonFile}}
	}
	set := func(key, value string) string {
		return fmt.Sprintf(`set "%s": %s in %s, then systemctl restart docker`, key, value, dockerDaemonFile)
	}
	c := d.Config
	return []Result{
		daemonSetting("docker-userns-remap", c.UsernsRemap != "", "containers run with root remapped to "+c.UsernsRemap+"'s subordinate ids (userns-remap)",
			"userns-remap is not set: root in a Docker container is root on the host", set("userns-remap", `"default"`)),
		daemonSetting("docker-no-new-privileges", c.NoNewPrivileges, "no-new-privileges is the daemon-wide default",
			"no-new-privileges is not the daemon-wide default: setuid binaries in containers can gain privileges", set("no-new-privileges", "true")),
		daemonSetting("docker-live-restore", c.LiveRestore, "live-restore is on: containers keep running while the daemon restarts (CIS Docker Benchmark 2.14)",
			"live-restore is off: restarting or upgrading the daemon stops every container (CIS Docker Benchmark 2.14)", set("live-restore", "true")),
	}
}

func daemonSetting(id string, on bool, pass, warn, fix string) Result {
	if on {
		return Result{ID: id, Status: Pass, Detail: pass}
	}
	return Result{ID: id, Status: Warn, Detail: warn, Fix: fix}
}

func checkPodman(f *Facts) []Result {
	p := f.Podman
	r := Result{ID: "podman", Status: Pass}
	switch {
	case p.Path == "":
		r.Detail = "Podman is not installed"
	case !f.User.Rootless():
		r.Detail = fmt.Sprintf("podman %s at %s; as root it runs rootful containers, while ordinary users with /etc/subuid entries run rootless ones", p.Version, p.Path)
	case f.IDs.Mode == "subids":
		r.Detail = fmt.Sprintf("podman %s runs rootless for %s with subordinate ids", p.Version, f.User.Name)
	default:
		r.Status = Warn
		r.Detail = fmt.Sprintf("podman %s cannot run rootless containers with more than one id for %s: %s", p.Version, f.User.Name, f.IDs.Reason)
		r.Fix = subIDFix(f, f.User.Name)
	}
	return []Result{r}
}

func checkAgents(f *Facts) []Result {
	if len(f.Agents) == 0 {
		return []Result{{ID: "agents", Status: Pass, Detail: "no agent CLI (" + strings.Join(agentCLIs, ", ") + ") on PATH and no agent settings in " + orUnknown(f.User.Home)}}
	}
	var out []Result
	for _, a := range f.Agents {
		out = append(out, agentResult(a))
	}
	return out
}

func agentResult(a AgentFacts) Result {
	r := Result{ID: "agent-" + a.Name, Status: Pass}
	where := "not on PATH"
	if a.Path != "" {
		where = "at " + a.Path
	}
	var hits, files []string
	for _, c := range a.Configs {
		files = append(files, c.Path)
		if c.AutoApprove != "" {
			hits = append(hits, c.Path+": "+c.AutoApprove)
		}
	}
	switch {
	case len(hits) > 0:
		r.Status = Warn
		r.Detail = fmt.Sprintf("%s %s; its settings select auto-approve (%s): outside agentbox it acts without asking, with this user's full access", a.Name, where, strings.Join(hits, "; "))
		r.Fix = "remove the setting from " + strings.Join(files, " and ") + ", and run the agent only through agentbox run"
	case len(files) > 0:
		r.Detail = fmt.Sprintf("%s %s; no auto-approve in %s", a.Name, where, strings.Join(files, ", "))
	default:
		r.Detail = fmt.Sprintf("%s %s; no settings file found", a.Name, where)
	}
	return r
}
