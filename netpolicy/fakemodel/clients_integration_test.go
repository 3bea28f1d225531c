//go:build integration && linux

package fakemodel_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentbox/agentbox/agents"
	"github.com/agentbox/agentbox/internal/testutil"
	"github.com/agentbox/agentbox/netpolicy"
	"github.com/agentbox/agentbox/netpolicy/bridge"
	"github.com/agentbox/agentbox/netpolicy/fakemodel"
)

const (
	helperEnv  = "AGENTBOX_FAKEMODEL_CLIENT_HELPER"
	bridgePort = 18787
	reply      = "agentbox-fake-reply-7f3a"
	realOpenAI = "sk-real-openai-key-for-the-test"
	realAnth   = "sk-ant-real-key-for-the-test"
)

// helperJob is what the parent hands the child in its network namespace.
type helperJob struct {
	Socket string            `json:"socket"`
	Argv   []string          `json:"argv"`
	Env    map[string]string `json:"env"`
	Dir    string            `json:"dir"`
}

// TestRealClients runs the real codex and Claude Code CLIs the way a sandbox
// does, minus the container: each runs in a network namespace of its own
// that has only lo, where the bridge forwards 127.0.0.1:PORT to the
// gateway's unix socket; the gateway and a fake model server run outside.
// The fake server must see the real key and never the per-run token, and
// the agent's environment never holds the real key. Install the CLIs with
// scripts/gateway-install-agents.sh.
func TestRealClients(t *testing.T) {
	if os.Getenv(helperEnv) != "" {
		runHelper(t)
		return
	}
	testutil.RequireBinary(t, "ip", "iproute2")
	for _, tc := range []struct {
		name, pkg string
		args      []string
	}{
		{"codex", "@openai/codex", []string{"exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "Say hello."}},
		{"claude", "@anthropic-ai/claude-code", []string{"-p", "--dangerously-skip-permissions", "Say hello."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bin := testutil.RequireBinary(t, tc.name, "npm: "+tc.pkg+" (scripts/gateway-install-agents.sh)")
			runClient(t, append([]string{bin}, tc.args...))
		})
	}
}

func runClient(t *testing.T, argv []string) {
	fake := fakemodel.New(reply)
	upstream := httptest.NewServer(fake)
	defer upstream.Close()
	token, err := netpolicy.NewToken()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg := netpolicy.Config{
		RunID: "e2e", Token: token, LogFile: filepath.Join(dir, "gateway.jsonl"),
		Upstreams: map[string]netpolicy.Upstream{"openai": {URL: upstream.URL}, "anthropic": {URL: upstream.URL}},
	}
	hostEnv := map[string]string{"OPENAI_API_KEY": realOpenAI, "ANTHROPIC_API_KEY": realAnth}
	g, err := netpolicy.New(cfg, netpolicy.WithGetenv(func(k string) string { return hostEnv[k] }))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	sock := filepath.Join(dir, "gw.sock")
	l, err := netpolicy.ListenUnix(sock, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	go g.Serve(l)

	launch, err := agents.Prepare(argv, nil, agents.Gateway{URL: "http://127.0.0.1:" + itoa(bridgePort), Token: token})
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(dir, "home")
	work := filepath.Join(dir, "work")
	os.MkdirAll(home, 0o700)
	os.MkdirAll(work, 0o700)
	env := map[string]string{"PATH": os.Getenv("PATH"), "HOME": home, "TERM": "dumb"}
	for k, v := range launch.Env {
		env[k] = v
	}
	for k, v := range env {
		if strings.Contains(v, realOpenAI) || strings.Contains(v, realAnth) {
			t.Fatalf("the agent's environment holds a real key in %s", k)
		}
	}
	job, _ := json.Marshal(helperJob{Socket: sock, Argv: launch.Argv, Env: env, Dir: work})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestRealClients$", "-test.v")
	cmd.Env = append(os.Environ(), helperEnv+"="+string(job))
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET}
	out, err := cmd.CombinedOutput()
	t.Logf("agent %s (permission %+v):\n%s", launch.Agent, launch.Permission, out)
	if err != nil {
		t.Fatalf("agent in its namespace: %v", err)
	}
	if !strings.Contains(string(out), reply) {
		t.Errorf("the agent's output lacks the fake model's reply %q", reply)
	}
	if len(fake.Requests()) == 0 {
		t.Fatal("the fake model saw no request")
	}
	if !fake.Saw(realOpenAI) && !fake.Saw(realAnth) {
		t.Error("the fake model never saw the real key")
	}
	if fake.Saw(token) {
		t.Error("the fake model saw the per-run token")
	}
	if s := g.Stats(); s.Allowed == 0 {
		t.Errorf("gateway stats %+v", s)
	}
}

// runHelper is the child: it brings up lo in its fresh namespace, starts the
// bridge, and runs the agent.
func runHelper(t *testing.T) {
	ifs, err := net.Interfaces()
	if err != nil || len(ifs) != 1 || ifs[0].Name != "lo" {
		t.Fatalf("refusing to run an agent outside a fresh network namespace: %v %v", ifs, err)
	}
	var job helperJob
	if err := json.Unmarshal([]byte(os.Getenv(helperEnv)), &job); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("ip", "link", "set", "lo", "up").CombinedOutput(); err != nil {
		t.Fatalf("ip link set lo up: %v %s", err, out)
	}
	b, err := bridge.Listen(bridge.Config{Port: bridgePort, Socket: job.Socket})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go b.Serve(ctx)
	cmd := exec.Command(job.Argv[0], job.Argv[1:]...)
	cmd.Dir = job.Dir
	for k, v := range job.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, err := cmd.CombinedOutput()
	t.Logf("agent output:\n%s", out)
	if err != nil {
		t.Fatalf("agent: %v", err)
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
