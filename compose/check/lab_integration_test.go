//go:build integration

package check

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/agentbox/agentbox/audit"
	"github.com/agentbox/agentbox/compose"
	"github.com/agentbox/agentbox/internal/testutil"
)

// The lab's audit script (testutil.LabAudit) is the oracle here: the agent
// container of the project agentbox compose writes audits clean by its
// measure and by agentbox's, and every fault of the lab added to it is named
// by both, agentbox naming at least every code the lab names.

// labFault is one of the lab's faults added to the agent service: an
// override file where compose can express it, or else an edit of a copy of
// compose.yaml (docker-compose 1.29 merges security_opt as a union, and
// refuses network_mode beside networks, so those two faults cannot be added
// by an override). want is a code the lab's script must name, so that a
// fault that did not apply cannot pass.
type labFault struct {
	name, override, want string
	edit                 func(agent *yaml.Node)
}

// labFaultsAll are the faults the lab's script checks. HOMEDIR is a fake
// home directory under /home that the test creates.
var labFaultsAll = []labFault{
	{name: "socket", override: "services:\n  agent:\n    volumes: [\"/var/run/docker.sock:/var/run/docker.sock\"]\n", want: audit.CodeContainerSocket},
	{name: "home", override: "services:\n  agent:\n    volumes: [\"HOMEDIR:/home/ana:ro\"]\n", want: audit.CodeHomeDirectory},
	{name: "secret", override: "services:\n  agent:\n    environment:\n      GITHUB_TOKEN: " + fakeToken + "\n", want: audit.CodeSecretInEnv},
	{name: "open-network", override: "services:\n  agent:\n    networks: [open]\nnetworks:\n  open: {}\n", want: audit.CodeNetworkPolicy},
	{name: "host-network", want: audit.CodeHostNetwork, edit: func(a *yaml.Node) {
		deleteKey(a, "networks")
		deleteKey(a, "hostname")
		setKey(a, "network_mode", "host")
	}},
	{name: "privileged", override: "services:\n  agent:\n    privileged: true\n", want: audit.CodePrivileged},
	{name: "cap-add", override: "services:\n  agent:\n    cap_add: [SYS_ADMIN]\n", want: audit.CodeCapsAdded},
	{name: "root", override: "services:\n  agent:\n    user: \"0:0\"\n", want: audit.CodeRunsAsRoot},
	{name: "writable-root", override: "services:\n  agent:\n    read_only: false\n", want: audit.CodeWritableRoot},
	{name: "new-privileges", want: audit.CodeNewPrivileges, edit: func(a *yaml.Node) {
		opts := valueOf(a, "security_opt")
		opts.Content = slices.DeleteFunc(opts.Content, func(n *yaml.Node) bool { return strings.HasPrefix(n.Value, "no-new-privileges") })
	}},
	{name: "no-limits", override: "services:\n  agent:\n    mem_limit: 0\n    memswap_limit: 0\n", want: audit.CodeNoLimits},
}

// checkLabClean: the agent container audits clean by the lab's script and
// by `agentbox audit CONTAINER` without any flag: the workspace comes from
// the label, the gateway key is allowed by its shape, and the user namespace
// is there (a remapping dockerd) or accepted with its reason.
func (e *engineEnv) checkLabClean(t *testing.T, what string) {
	t.Helper()
	if codes, out := testutil.LabAudit(t, e.container(compose.AgentService)); len(codes) > 0 {
		t.Errorf("%s: the lab's script names %v:\n%s", what, codes, out)
	}
	r := e.auditAgent()
	for _, f := range r.Unaccepted() {
		t.Errorf("%s: agentbox audit: %s %s: %s", what, f.Code, f.Subject, f.Detail)
	}
	if len(r.Containers) != 1 {
		t.Fatalf("%s: %d containers audited", what, len(r.Containers))
	}
	c := r.Containers[0]
	if c.Model.LabeledWorkspace != e.ws || c.Model.PresumedWorkspace != "" {
		t.Errorf("%s: workspace from the label %q, presumed %q; want %s from the label", what, c.Model.LabeledWorkspace, c.Model.PresumedWorkspace, e.ws)
	}
	remaps := daemonRemaps(t)
	var userns *audit.Finding
	for i := range c.Findings {
		if c.Findings[i].Code == audit.CodeNoUserNS {
			userns = &c.Findings[i]
		}
	}
	switch {
	case remaps && (userns != nil || c.Model.UserNS != audit.Yes):
		t.Errorf("%s: dockerd remaps users, but the audit reports userns=%s and %+v", what, c.Model.UserNS, userns)
	case !remaps && (userns == nil || !userns.Accepted || !strings.HasPrefix(userns.AcceptedReason, compose.UserNSReason)):
		t.Errorf("%s: dockerd does not remap users; want %s accepted with the project's reason, got %+v", what, audit.CodeNoUserNS, userns)
	}
}

// daemonRemaps asks the engine whether it runs with userns-remap.
func daemonRemaps(t *testing.T) bool {
	out, err := exec.Command("docker", "info", "--format", "{{json .SecurityOptions}}").Output()
	if err != nil {
		t.Fatalf("docker info: %v", err)
	}
	var opts []string
	if err := json.Unmarshal(out, &opts); err != nil {
		t.Fatalf("docker info: %v: %s", err, out)
	}
	return slices.ContainsFunc(opts, func(o string) bool { return strings.Contains(o, "name=userns") })
}

// checkAuditText: the text report says where the workspace came from and
// why the residual is accepted.
func (e *engineEnv) checkAuditText(t *testing.T) {
	out, code := e.agentbox("audit", "--color", "never", e.container(compose.AgentService))
	if code != 0 {
		t.Fatalf("agentbox audit exited %d:\n%s", code, out)
	}
	if !strings.Contains(out, e.ws+" -> ") || !strings.Contains(out, "["+audit.LabeledWorkspaceNote+"]") {
		t.Errorf("the Mounts section does not mark the workspace from its label:\n%s", out)
	}
	if !daemonRemaps(t) && !strings.Contains(out, "[accepted: "+compose.UserNSReason) {
		t.Errorf("the report does not print the user-namespace residual's reason:\n%s", out)
	}
}

// checkLabFaults adds each fault to the agent, recreating only the agent:
// the lab's script and agentbox's audit name it, agentbox every code the lab
// names; then the agent is recreated from the project as written, audits
// clean again and reaches the gateway (the gateway-reachable check).
func (e *engineEnv) checkLabFaults(t *testing.T) {
	home := fakeHome(t)
	for _, fault := range labFaultsAll {
		t.Run(fault.name, func(t *testing.T) {
			files := e.faultFiles(t, fault, home)
			e.recreateAgent(files)
			lab, out := testutil.LabAudit(t, e.container(compose.AgentService))
			if !slices.Contains(lab, fault.want) {
				t.Fatalf("the lab's script does not name %s; the fault did not apply:\n%s", fault.want, out)
			}
			r := e.auditAgent()
			var ours []string
			for _, f := range r.Unaccepted() {
				ours = append(ours, f.Code)
			}
			t.Logf("the lab's script names %v; agentbox %v", lab, ours)
			for _, code := range lab {
				if !slices.Contains(ours, code) {
					t.Errorf("the lab's script names %s and agentbox does not (agentbox: %v)", code, ours)
				}
			}
			e.recreateAgent(e.files)
			e.checkLabClean(t, "after removing "+fault.name)
			e.waitGateway()
		})
	}
}

// recreateAgent recreates the agent service alone from files.
func (e *engineEnv) recreateAgent(files []string) {
	e.t.Helper()
	saved := e.files
	e.files = files
	defer func() { e.files = saved }()
	e.dc(nil, "up", "-d", "--no-deps", "--force-recreate", compose.AgentService)
}

// faultFiles are the compose files that add fault: the project and an
// override, or an edited copy of the project in its own directory (so that
// its relative paths still resolve), removed at cleanup.
func (e *engineEnv) faultFiles(t *testing.T, fault labFault, home string) []string {
	if fault.edit == nil {
		p := filepath.Join(t.TempDir(), fault.name+".yaml")
		if err := os.WriteFile(p, []byte(strings.ReplaceAll(fault.override, "HOMEDIR", home)), 0o644); err != nil {
			t.Fatal(err)
		}
		return append(append([]string(nil), e.files...), p)
	}
	b, err := os.ReadFile(e.files[0])
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	fault.edit(valueOf(valueOf(doc.Content[0], "services"), compose.AgentService))
	edited, err := yaml.Marshal(&doc)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(e.out, ".fault-"+fault.name+".yaml")
	if err := os.WriteFile(p, edited, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(p) })
	return []string{p}
}

// fakeHome creates a directory that looks like a home directory to the lab's
// script (/home/NAME) and removes it at cleanup; it is nobody's.
func fakeHome(t *testing.T) string {
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	home := "/home/abxlab" + hex.EncodeToString(b)
	if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	return home
}

// valueOf returns the value node of key in mapping m, failing loudly when
// the rendered project has changed shape.
func valueOf(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	panic("compose.yaml has no key " + key)
}

func deleteKey(m *yaml.Node, key string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content = append(m.Content[:i], m.Content[i+2:]...)
			return
		}
	}
}

func setKey(m *yaml.Node, key, value string) {
	deleteKey(m, key)
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key}, &yaml.Node{Kind: yaml.ScalarNode, Value: value})
}
