package doctor

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// dockerInfoSecurity asks the running dockerd for its security options;
// "name=userns" among them means it remaps users, "name=rootless" that it
// runs in a user namespace of its own.
var dockerInfoSecurity = []string{"info", "--format", "{{json .SecurityOptions}}"}

// gatherDockerUserNS asks the running dockerd (not daemon.json, which a
// daemon started with flags or not yet restarted does not follow) whether it
// remaps users.
func gatherDockerUserNS(ctx context.Context, h Host, f *Facts) {
	d := &f.Docker
	if !d.SocketFound {
		return
	}
	out, err := h.Sys.Output(ctx, "docker", dockerInfoSecurity...)
	if err != nil {
		d.RunningUserNSErr = err.Error()
		return
	}
	var opts []string
	if err := json.Unmarshal(out, &opts); err != nil {
		d.RunningUserNSErr = "docker info: " + err.Error()
		return
	}
	d.RunningUserNS = "no"
	for _, o := range opts {
		if strings.Contains(o, "name=userns") || strings.Contains(o, "name=rootless") {
			d.RunningUserNS = "yes"
		}
	}
}

// checkDockerUserNS says whether the running dockerd gives containers a user
// namespace, the one layer a compose project cannot ask for per service
// (agentbox compose accepts its absence as the residual
// user-namespace-not-used). It is a hint for compose users: host hygiene,
// never blocking, and silent when no dockerd runs.
func checkDockerUserNS(f *Facts) []Result {
	d := f.Docker
	if !d.Installed || !d.SocketFound {
		return nil
	}
	r := Result{ID: "docker-userns-running"}
	switch d.RunningUserNS {
	case "yes":
		r.Status = Pass
		r.Detail = "the running dockerd gives every container a user namespace (userns-remap or rootless): the agent of an agentbox compose project has one, and agentbox audit sees it"
	case "no":
		r.Status = Warn
		r.Detail = "the running dockerd does not remap users: a container's uids are the host's, so the agent of an agentbox compose project runs under a host uid (accepted there as the residual user-namespace-not-used)"
		r.Fix = fmt.Sprintf(`to give compose agents a user namespace, set "userns-remap": "default" in %s and restart dockerd (systemctl restart docker); files the agent writes then belong to a subordinate uid (docs/compose.md)`, dockerDaemonFile)
	default:
		r.Status = Unknown
		r.Detail = "cannot ask the running dockerd whether it remaps users: " + d.RunningUserNSErr
		r.Fix = "docker " + strings.Join(dockerInfoSecurity[:2], " ") + " '" + dockerInfoSecurity[2] + "'"
	}
	return []Result{r}
}
