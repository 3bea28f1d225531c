package audit

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentbox/agentbox/policy"
)

// TestLabeledWorkspace: the workspace label names which read-write bind is
// the workspace, with one bind and with several; it hides nothing else, and
// a label that names no read-write bind is reported and ignored.
func TestLabeledWorkspace(t *testing.T) {
	bind := func(src, dst string, ro bool) Mount {
		return Mount{Type: "bind", Source: src, Destination: dst, ReadOnly: ro}
	}
	tests := []struct {
		name    string
		label   string
		change  func(c *Container)
		opts    Options
		want    []string // findings: "code subject"
		labeled string
		note    string // a substring of the report's note, or ""
	}{
		{"one bind, labelled", "/work/project", func(c *Container) {}, Options{}, nil, "/work/project", ""},
		{"the label is cleaned", "/work/project/", func(c *Container) {}, Options{}, nil, "/work/project", ""},
		{"beside a read-only bind", "/work/project", func(c *Container) {
			c.Mounts = append(c.Mounts, bind("/srv/keys", "/keys", true))
		}, Options{}, nil, "/work/project", ""},
		{"several read-write binds: the others stay findings", "/work/project", func(c *Container) {
			c.Mounts = append(c.Mounts, bind("/srv/cache", "/cache", false), bind("/srv/out", "/out", false))
		}, Options{}, []string{"extra-writable-mount /srv/cache -> /cache", "extra-writable-mount /srv/out -> /out"}, "/work/project", ""},
		{"the label picks the second of two binds", "/srv/cache", func(c *Container) {
			c.Mounts = append(c.Mounts, bind("/srv/cache", "/cache", false))
		}, Options{}, []string{"extra-writable-mount /work/project -> /workspace"}, "/srv/cache", ""},
		{
			"a label naming no bind hides nothing, not even the single bind", "/work/elsewhere", func(c *Container) {},
			Options{},
			[]string{"extra-writable-mount /work/project -> /workspace"},
			"", "names no read-write bind",
		},
		{"a label naming a read-only bind is no workspace", "/srv/keys", func(c *Container) {
			c.Mounts = append(c.Mounts, bind("/srv/keys", "/keys", true))
		}, Options{}, []string{"extra-writable-mount /work/project -> /workspace"}, "", "names no read-write bind"},
		{
			"a label naming the container path is not the host path", "/workspace", func(c *Container) {},
			Options{},
			[]string{"extra-writable-mount /work/project -> /workspace"},
			"", "names no read-write bind",
		},
		{"a labelled home directory is still a home directory", "/srv/users/ana", func(c *Container) {
			c.Mounts = []Mount{bind("/srv/users/ana", "/workspace", false)}
		}, Options{HomeDirs: []string{"/srv/users/ana"}}, []string{"home-directory-mounted /srv/users/ana -> /workspace"}, "/srv/users/ana", ""},
		{"a labelled system directory is still a system directory", "/etc", func(c *Container) {
			c.Mounts = []Mount{bind("/etc", "/workspace", false)}
		}, Options{}, []string{"system-directory-mounted /etc -> /workspace"}, "/etc", ""},
		{
			"a declared workspace wins over the label", "/work/project", func(c *Container) {},
			Options{Workspaces: []string{"/work/other"}},
			[]string{"extra-writable-mount /work/project -> /workspace"},
			"", "",
		},
		{"the label wins over the compose project directory", "/srv/cache", func(c *Container) {
			c.ProjectDir = "/work/project"
			c.Mounts = append(c.Mounts, bind("/srv/cache", "/cache", false))
		}, Options{}, []string{"extra-writable-mount /work/project -> /workspace"}, "/srv/cache", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := hardened()
			c.FromLabels(map[string]string{policy.WorkspaceLabel: tc.label})
			tc.change(&c)
			r := Audit([]Container{c}, tc.opts)
			cr := r.Containers[0]
			var got []string
			for _, f := range cr.Findings {
				got = append(got, f.Code+" "+f.Subject)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
			if cr.Model.LabeledWorkspace != tc.labeled || cr.Model.PresumedWorkspace != "" {
				t.Errorf("labelled workspace %q, presumed %q; want %q and none", cr.Model.LabeledWorkspace, cr.Model.PresumedWorkspace, tc.labeled)
			}
			notes := strings.Join(cr.Notes, "\n")
			if tc.note == "" && notes != "" || !strings.Contains(notes, tc.note) {
				t.Errorf("notes %q, want one containing %q", notes, tc.note)
			}
			var text strings.Builder
			if err := WriteText(&text, r, false); err != nil {
				t.Fatal(err)
			}
			mark := "[" + LabeledWorkspaceNote + "]"
			if strings.Contains(text.String(), mark) != (tc.labeled != "") {
				t.Errorf("the Mounts section marks the labelled workspace: %v, want %v:\n%s", !(tc.labeled != ""), tc.labeled != "", text.String())
			}
			if tc.note != "" && !strings.Contains(text.String(), "\nnote: "+cr.Notes[0]+"\n") {
				t.Errorf("the text report does not print the note:\n%s", text.String())
			}
		})
	}
}

// TestLabelAcceptances: an accept label gives an informational finding its
// reason; it cannot accept a finding that fails, and says so.
func TestLabelAcceptances(t *testing.T) {
	const reason = "stock Docker has no per-container user namespace"
	tests := []struct {
		name   string
		labels map[string]string
		change func(c *Container)
		want   []string
		notes  int
	}{
		{
			"no label: a note without a reason", nil, func(c *Container) { c.UserNS = No },
			[]string{"user-namespace-not-used info"},
			0,
		},
		{
			"the residual, accepted",
			map[string]string{policy.AcceptLabel(CodeNoUserNS): reason},
			func(c *Container) { c.UserNS = No },
			[]string{"user-namespace-not-used info accepted"},
			0,
		},
		{
			"a user namespace: nothing to accept",
			map[string]string{policy.AcceptLabel(CodeNoUserNS): reason},
			func(c *Container) {},
			nil, 0,
		},
		{
			"an empty reason accepts nothing",
			map[string]string{policy.AcceptLabel(CodeNoUserNS): " "},
			func(c *Container) { c.UserNS = No },
			[]string{"user-namespace-not-used info"},
			0,
		},
		{
			"a failing finding stays failing",
			map[string]string{policy.AcceptLabel(CodePrivileged): "it is fine"},
			func(c *Container) { c.Privileged = true },
			[]string{"privileged-container critical"},
			1,
		},
		{"raised auto-approve is not accepted by a label", map[string]string{
			policy.AcceptLabel(CodeAutoApprove): "yolo", policy.AcceptLabel(CodeRunsAsRoot): "root is fine",
		}, func(c *Container) {
			c.User, c.UserNS, c.Command = "root", No, []string{"claude", "--dangerously-skip-permissions"}
		}, []string{"auto-approve-permission-mode high", "runs-as-root high"}, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := hardened()
			c.FromLabels(tc.labels)
			tc.change(&c)
			r := Audit([]Container{c}, Options{Workspaces: []string{"/work/project"}})
			cr := r.Containers[0]
			if diff := cmp.Diff(tc.want, codesOf(cr.Findings)); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
			if len(cr.Notes) != tc.notes {
				t.Errorf("notes %q, want %d", cr.Notes, tc.notes)
			}
			for _, f := range cr.Findings {
				if f.Accepted && f.AcceptedReason != reason+" (label "+policy.AcceptLabel(f.Code)+")" {
					t.Errorf("%s accepted with %q", f.Code, f.AcceptedReason)
				}
			}
		})
	}
}
