package audit

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/internal/policytest"
	"github.com/agentbox/agentbox/policy"
)

// The planner and the audit classify a path with one function: each path
// below goes through policy.Resolve (as a workspace or a bind) and through
// the audit (as the mount that plan would render), and both must name the
// same class. A class the planner lets through the audit must pass too, so
// that no bind is refused at Plan on one path and at Audit on its neighbour.
func TestPlannerAndAuditAgree(t *testing.T) {
	const ws = "/srv/proj" // policytest.Host's working directory
	tests := []struct {
		path      string
		workspace bool // the path is the workspace, not a bind
		ro        bool
		want      string // the class both must name; "" none
	}{
		{"/srv/proj", true, false, ""},
		{"/tmp/ws", true, false, ""},
		{"/home/ana/proj", true, false, ""},
		{"/tmp", true, false, CodeSystemDirectory},
		{"/opt/proj", true, false, CodeSystemDirectory},
		{"/var/lib/proj", true, false, CodeSystemDirectory},
		{"/home/ana", true, false, CodeHomeDirectory},
		{"/home", true, false, CodeHomeDirectory},
		{"/", true, false, CodeHostRoot},

		{"/run/docker.sock", false, true, CodeContainerSocket},
		{"/run", false, true, CodeContainerSocket},
		{"/run/user/1000", false, true, CodeContainerSocket},
		{"/run/buildkit/buildkitd.sock", false, true, CodeContainerSocket},
		{"/srv/proj/docker.sock", false, true, CodeContainerSocket},
		{"/var/lib/kubelet/pod-resources", false, true, CodeContainerSocket},
		{"/var/lib", false, true, CodeSystemDirectory},
		{"/opt/tool", false, false, CodeSystemDirectory},
		{"/opt/tool", false, true, ""},
		{"/snap/core", false, true, CodeSystemDirectory},
		{"/usr/lib", false, true, ""},
		{"/usr/lib", false, false, CodeSystemDirectory},
		{"/etc/timezone", false, true, ""},
		{"/etc/shadow", false, true, CodeSystemDirectory},
		{"/tmp", false, false, CodeSystemDirectory},
		{"/tmp/cache", false, true, ""},
		{"/home/ana/.ssh", false, true, CodeHomeDirectory},
		{"/root/.aws", false, true, CodeHomeDirectory},
		{"/home/bob/src", false, true, CodeHomeDirectory}, // no passwd entry: /home/* is a home anyway
		{"/Users", false, true, CodeHomeDirectory},
		{"/srv/proj/vendor", false, true, ""},
		{"/", false, true, CodeHostRoot},
	}
	for _, tt := range tests {
		name := tt.path
		if tt.workspace {
			name = "workspace " + name
		} else if tt.ro {
			name += " ro"
		}
		t.Run(name, func(t *testing.T) {
			f := policytest.NewFS()
			mkdirs(f, tt.path)
			h := policytest.Host(f)
			plannerWS, p := ws, policy.Policy{}
			switch {
			case tt.workspace:
				plannerWS, p.Workspace = tt.path, tt.path
			case tt.ro:
				p.Binds.ReadOnly = []string{tt.path}
			default:
				p.Binds.ReadWrite = []string{tt.path}
			}
			planner := ""
			_, err := policy.Resolve(p, []string{"sh"}, h, policy.Run{ID: "R", Bundle: "/run/agentbox/runs/R/bundle"})
			var pr *policy.PathRefusal
			switch {
			case errors.As(err, &pr):
				planner = pr.Code
			case err != nil:
				t.Fatalf("Resolve: %v", err)
			}
			o := Options{Workspaces: []string{plannerWS}, HomeDirs: h.Homes}
			audit := ""
			if fd, ok := classifyMount(Mount{Type: "bind", Source: tt.path, Destination: tt.path, ReadOnly: tt.ro}, &o); ok && fd.Code != CodeExtraWritable {
				audit = fd.Code
			}
			if planner != tt.want || audit != tt.want {
				t.Errorf("planner %q, audit %q, want both %q", planner, audit, tt.want)
			}
		})
	}
}

// mkdirs makes p and its parents exist on f, as directories of root's,
// unless p exists already; a *.sock path and an /etc entry are files.
func mkdirs(f *policytest.FS, p string) {
	if _, err := f.Lstat(p); err == nil || p == "/" {
		return
	}
	mkdirs(f, filepath.Dir(p))
	if filepath.Ext(p) == ".sock" || strings.HasPrefix(p, "/etc/") {
		f.File(p, 0o600, 0)
		return
	}
	f.Dir(p, 0, 0)
}
