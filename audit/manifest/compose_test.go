package manifest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	. "github.com/agentbox/agentbox/audit"
)

// composeCase is one compose input: files written to a temp dir ({{DIR}}
// and {{HOME}} are replaced by the dir and a fake home inside it), the
// findings wanted for the listed codes, as "service code subject @file:line"
// with $DIR and $HOME for the paths.
type composeCase struct {
	name     string
	files    map[string]string
	load     []string // compose files to load, default compose.yaml
	profiles []string
	env      []string
	codes    []string
	want     []string
	wantErr  string // "file:line" substring of the error
}

func runComposeCase(t *testing.T, tc composeCase) {
	t.Helper()
	dir := t.TempDir()
	home := filepath.Join(dir, "home", "ana")
	if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	for name, body := range tc.files {
		body = strings.NewReplacer("{{DIR}}", dir, "{{HOME}}", home).Replace(body)
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	load := tc.load
	if load == nil {
		load = []string{"compose.yaml"}
	}
	var files []string
	for _, f := range load {
		files = append(files, filepath.Join(dir, f))
	}
	env := append([]string{"HOME=" + home}, tc.env...)
	cs, err := LoadCompose(context.Background(), files, ComposeOptions{Env: env, Profiles: tc.profiles})
	if tc.wantErr != "" {
		var ie *InputError
		if err == nil || !errors.As(err, &ie) {
			t.Fatalf("want an input error at %s, got %v", tc.wantErr, err)
		}
		if got := strings.ReplaceAll(err.Error(), dir+"/", ""); !strings.Contains(got, tc.wantErr) {
			t.Fatalf("error %q does not name %s", got, tc.wantErr)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	r := Audit(cs, Options{HomeDirs: []string{home}, Workspaces: []string{filepath.Join(dir, "ws")}})
	got := renderFindings(r, tc.codes, dir, home)
	if diff := cmp.Diff(tc.want, got); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
}

func renderFindings(r Report, codes []string, dir, home string) []string {
	keep := wordSet(codes...)
	rep := strings.NewReplacer(home, "$HOME", dir, "$DIR")
	var out []string
	for _, c := range r.Containers {
		for _, f := range c.Findings {
			if len(codes) > 0 && !keep[f.Code] {
				continue
			}
			s := fmt.Sprintf("%s %s %s @%s:%d", c.Name, f.Code, f.Subject, filepath.Base(f.File), f.Line)
			if f.Unknown {
				s += " unknown"
			}
			out = append(out, rep.Replace(s))
		}
	}
	return out
}

var mountCodes = []string{CodeContainerSocket, CodeHostRoot, CodeHomeDirectory, CodeSystemDirectory, CodeExtraWritable}

func TestComposeTable(t *testing.T) {
	for _, tc := range composeCases {
		t.Run(tc.name, func(t *testing.T) { runComposeCase(t, tc) })
	}
}

var composeCases = []composeCase{
	{
		name: "short and long volume syntax",
		files: map[string]string{"compose.yaml": `services:
  a:
    image: x
    volumes:
      - /var/run/docker.sock:/var/run/docker.sock
      - type: bind
        source: /
        target: /host
        read_only: true
      - /etc:/host-etc:ro
      - {{DIR}}/ws:/workspace
      - {{DIR}}/data:/data
      - named:/named
volumes:
  named: {}
`},
		codes: mountCodes,
		want: []string{
			"a container-socket-mounted /var/run/docker.sock -> /var/run/docker.sock @compose.yaml:5",
			"a host-root-mounted / -> /host @compose.yaml:6",
			"a extra-writable-mount $DIR/data -> /data @compose.yaml:12",
			"a extra-writable-mount named -> /named @compose.yaml:13",
			"a system-directory-mounted /etc -> /host-etc @compose.yaml:10",
		},
	},
	{
		name: "HOME and tilde paths, read-only does not help",
		files: map[string]string{"compose.yaml": `services:
  a:
    image: x
    volumes:
      - ${HOME}/.ssh:/root/.ssh:ro
      - ~/:/home/agent
`},
		codes: mountCodes,
		want: []string{
			"a home-directory-mounted $HOME -> /home/agent @compose.yaml:6",
			"a home-directory-mounted $HOME/.ssh -> /root/.ssh @compose.yaml:5",
		},
	},
	{
		name: "dot-dot and /var/run spellings of a socket",
		files: map[string]string{"compose.yaml": `services:
  a:
    image: x
    volumes:
      - /var/../run/docker.sock:/tmp/d.sock
      - /run/containerd/s/abc123:/shim
      - /var/run:/host-run:ro
      - /run/user/1000:/xdg
`},
		codes: mountCodes,
		want: []string{
			"a container-socket-mounted /run/containerd/s/abc123 -> /shim @compose.yaml:6",
			"a container-socket-mounted /run/user/1000 -> /xdg @compose.yaml:8",
			"a container-socket-mounted /var/../run/docker.sock -> /tmp/d.sock @compose.yaml:5",
			"a container-socket-mounted /var/run -> /host-run @compose.yaml:7",
		},
	},
	{
		name: "sockets under other names",
		files: map[string]string{"compose.yaml": `services:
  a:
    image: x
    volumes:
      - /run/podman/podman.sock:/var/run/engine.sock
      - /srv/proxy.sock:/var/run/docker.sock
      - /opt/my-docker.sock:/x.sock
      - /var/lib/kubelet/pod-resources/kubelet.sock:/k.sock
      - /run/crio/crio.sock:/c.sock
    use_api_socket: true
    environment:
      DOCKER_HOST: unix:///run/d.sock
`},
		codes: mountCodes,
		want: []string{
			"a container-socket-mounted /opt/my-docker.sock -> /x.sock @compose.yaml:7",
			"a container-socket-mounted /run/crio/crio.sock -> /c.sock @compose.yaml:9",
			"a container-socket-mounted /run/podman/podman.sock -> /var/run/engine.sock @compose.yaml:5",
			"a container-socket-mounted /srv/proxy.sock -> /var/run/docker.sock @compose.yaml:6",
			"a container-socket-mounted /var/lib/kubelet/pod-resources/kubelet.sock -> /k.sock @compose.yaml:8",
			"a container-socket-mounted DOCKER_HOST @compose.yaml:12",
			"a container-socket-mounted use_api_socket @compose.yaml:10",
		},
	},
	{
		name: "environment as a list, as a map, and env_file",
		files: map[string]string{
			"compose.yaml": `services:
  list:
    image: x
    environment:
      - OPENAI_API_KEY=sk-fake
      - TOKENIZERS_PARALLELISM=false
      - PASSED_TOKEN
      - EMPTY_SECRET=
  map:
    image: x
    env_file: agent.env
    environment:
      ANTHROPIC_API_KEY: fake
      DB_URL: postgres://u:fakepw@db/x
      KEY_FILE: /run/secrets/key
`,
			"agent.env": "# comment\nHF_TOKEN=hf_fake\nAWS_REGION=eu-west-1\nAWS_SECRET_ACCESS_KEY=fake\n",
		},
		codes: []string{CodeSecretInEnv},
		want: []string{
			"list secret-in-environment OPENAI_API_KEY @compose.yaml:5",
			"list secret-in-environment PASSED_TOKEN @compose.yaml:7",
			"map secret-in-environment ANTHROPIC_API_KEY @compose.yaml:13",
			"map secret-in-environment AWS_SECRET_ACCESS_KEY @agent.env:4",
			"map secret-in-environment DB_URL @compose.yaml:14",
			"map secret-in-environment HF_TOKEN @agent.env:2",
		},
	},
	{
		name: "anchors and merge keys point at the anchor",
		files: map[string]string{"compose.yaml": `x-base: &base
  image: x
  privileged: true
  cap_add: [SYS_ADMIN]
x-vols: &vols
  - /etc/shadow:/shadow:ro
services:
  a:
    <<: *base
    volumes: *vols
  b:
    <<: *base
    privileged: false
`},
		codes: []string{CodePrivileged, CodeCapsAdded, CodeSystemDirectory},
		want: []string{
			"a privileged-container privileged @compose.yaml:3",
			"a system-directory-mounted /etc/shadow -> /shadow @compose.yaml:6",
			"b capabilities-added CAP_SYS_ADMIN @compose.yaml:4",
		},
	},
	{
		name: "extends in the same and another file",
		files: map[string]string{
			"compose.yaml": `services:
  base:
    image: x
    network_mode: host
  child:
    extends: base
    user: "0:0"
  remote:
    extends:
      file: common/base.yaml
      service: shared
`,
			"common/base.yaml": `services:
  shared:
    image: x
    pid: host
    volumes:
      - ../ws:/workspace
`,
		},
		codes: []string{CodeHostNetwork, CodeHostPID, CodeRunsAsRoot, CodeExtraWritable},
		want: []string{
			"base host-network-mode network_mode: host @compose.yaml:4",
			"base runs-as-root user (image default) @compose.yaml:2 unknown",
			"child host-network-mode network_mode: host @compose.yaml:4",
			"child runs-as-root user 0:0 @compose.yaml:7 unknown",
			"remote host-pid-mode pid: host @base.yaml:4",
			"remote runs-as-root user (image default) @compose.yaml:8 unknown",
		},
	},
	{
		name: "internal, non-internal, external and default networks",
		files: map[string]string{"compose.yaml": `services:
  inside:
    image: x
    networks: [inner]
  outside:
    image: x
    networks: [inner, outer]
  ext:
    image: x
    networks: [shared]
  plain:
    image: x
  bridge:
    image: x
    network_mode: bridge
  none:
    image: x
    network_mode: none
networks:
  inner:
    internal: true
  outer: {}
  shared:
    external: true
`},
		codes: []string{CodeNetworkPolicy, CodeHostNetwork},
		want: []string{
			"bridge network-policy-not-applied bridge @compose.yaml:13",
			"ext network-policy-not-applied shared @compose.yaml:10 unknown",
			"outside network-policy-not-applied outer @compose.yaml:7",
			"plain network-policy-not-applied default @compose.yaml:11",
		},
	},
	{
		name: "network_mode service: takes the peer's network",
		files: map[string]string{"compose.yaml": `services:
  gw:
    image: x
    network_mode: host
  agent:
    image: x
    network_mode: service:gw
  sidecar:
    image: x
    networks: [inner]
  peer:
    image: x
    network_mode: service:sidecar
networks:
  inner:
    internal: true
`},
		codes: []string{CodeNetworkPolicy, CodeHostNetwork},
		want: []string{
			"agent host-network-mode network_mode: host @compose.yaml:7",
			"agent network-policy-not-applied network_mode: host @compose.yaml:7",
			"gw host-network-mode network_mode: host @compose.yaml:4",
			"gw network-policy-not-applied network_mode: host @compose.yaml:4",
		},
	},
	{
		// The lab's script names cap_add whatever it adds: a default
		// capability added back after dropping all is still added.
		name: "cap_drop ALL, cap_add a default capability",
		files: map[string]string{"compose.yaml": `services:
  a:
    image: x
    user: "1000"
    cap_drop: [ALL]
    cap_add: [NET_RAW]
`},
		codes: []string{CodeCapsAdded},
		want:  []string{"a capabilities-added CAP_NET_RAW @compose.yaml:6"},
	},
	{
		name: "user 0:0, cap_add ALL",
		files: map[string]string{"compose.yaml": `services:
  a:
    image: x
    user: "0:0"
    cap_add: [ALL]
    cap_drop: [ALL]
    userns_mode: host
`},
		codes: []string{CodeRunsAsRoot, CodeCapsAdded, CodeNoUserNS},
		want: []string{
			"a capabilities-added ALL @compose.yaml:5",
			"a runs-as-root user 0:0 @compose.yaml:4",
		},
	},
	{
		name:    "invalid YAML names file and line",
		files:   map[string]string{"compose.yaml": "services:\n  a:\n    image: x\n   bad: [\n"},
		wantErr: "compose.yaml:3: compose rejected the project: failed to parse compose.yaml: yaml: while parsing a block mapping at line 1, column 3: line 3, column 4: did not find expected key",
	},
	{
		name:    "a second malformed YAML document",
		files:   map[string]string{"compose.yaml": "services:\n  a:\n    image: x\n---\nservices: [\n  - {\n"},
		wantErr: "compose.yaml:5:",
	},
	{
		name:    "a compose validation error names the key's line",
		files:   map[string]string{"compose.yaml": "services:\n  a:\n    image: x\n    volumes: 3\n"},
		wantErr: "compose.yaml:4",
	},
	{
		name:    "a wrong type names the key's line",
		files:   map[string]string{"compose.yaml": "services:\n  a:\n    image: x\n    privileged: maybe\n"},
		wantErr: "compose.yaml:4",
	},
}

// debugProfile is a compose file whose debug profile mounts the engine
// socket into a privileged service: `docker compose --profile debug up`
// runs it, and compose-go drops it unless its profile is enabled.
const debugProfile = `services:
  app:
    image: x
  debug:
    image: x
    profiles: [debug, tools]
    privileged: true
    volumes:
      - /var/run/docker.sock:/var/run/docker.sock
  lint:
    image: x
    profiles: [lint]
`

func TestComposeProfiles(t *testing.T) {
	tests := []struct {
		name     string
		profiles []string
		want     []string // "service [profiles]"
		faults   []string
	}{
		{
			"every service by default", nil,
			[]string{"app []", "debug [debug tools]", "lint [lint]"},
			[]string{"debug container-socket-mounted /var/run/docker.sock -> /var/run/docker.sock @compose.yaml:9", "debug privileged-container privileged @compose.yaml:7"},
		},
		{"--profile lint narrows to what it runs", []string{"lint"}, []string{"app []", "lint [lint]"}, nil},
		{
			"--profile debug",
			[]string{"debug"},
			[]string{"app []", "debug [debug tools]"},
			[]string{"debug container-socket-mounted /var/run/docker.sock -> /var/run/docker.sock @compose.yaml:9", "debug privileged-container privileged @compose.yaml:7"},
		},
		{
			"--profile '*'",
			[]string{"*"},
			[]string{"app []", "debug [debug tools]", "lint [lint]"},
			[]string{"debug container-socket-mounted /var/run/docker.sock -> /var/run/docker.sock @compose.yaml:9", "debug privileged-container privileged @compose.yaml:7"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			f := filepath.Join(dir, "compose.yaml")
			if err := os.WriteFile(f, []byte(debugProfile), 0o644); err != nil {
				t.Fatal(err)
			}
			cs, err := LoadCompose(context.Background(), []string{f}, ComposeOptions{Profiles: tc.profiles})
			if err != nil {
				t.Fatal(err)
			}
			r := Audit(cs, Options{})
			var got []string
			for _, c := range r.Containers {
				got = append(got, fmt.Sprintf("%s %v", c.Name, c.Profiles))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("services (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.faults, renderFindings(r, []string{CodePrivileged, CodeContainerSocket}, dir, dir)); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
			var text strings.Builder
			if err := WriteText(&text, r, false); err != nil {
				t.Fatal(err)
			}
			if len(tc.faults) > 0 && !strings.Contains(text.String(), "== debug (compose, "+f+":4, profiles: debug, tools) ==") {
				t.Errorf("the text report does not name the debug service's profiles:\n%s", text.String())
			}
		})
	}
}

// passThrough spells every way a credential reaches a compose service from
// the environment of whoever runs compose.
var passThrough = map[string]string{
	"compose.yaml": `services:
  agent:
    image: x
    env_file: [agent.env]
    environment:
      - ANTHROPIC_API_KEY=${ANTHROPIC_API_KEY:-}
      - GITHUB_TOKEN
      - DEBUG=${DEBUG:-}
      - PRICE=$$API_TOKEN
      - EMPTY_TOKEN=
  map:
    image: x
    environment:
      HF_TOKEN: ${HF_TOKEN}
      NPM_TOKEN:
      VAULT_TOKEN: $VAULT_TOKEN
      LOG_LEVEL: ${LOG_LEVEL}
`,
	"agent.env": "API_SECRET=${API_SECRET}\nGH_TOKEN\nPLAIN=1\n",
}

func TestComposePassThroughCredentials(t *testing.T) {
	want := []string{
		"agent ANTHROPIC_API_KEY @compose.yaml:6",
		"agent API_SECRET @agent.env:1",
		"agent GH_TOKEN @agent.env:2",
		"agent GITHUB_TOKEN @compose.yaml:7",
		"map HF_TOKEN @compose.yaml:14",
		"map NPM_TOKEN @compose.yaml:15",
		"map VAULT_TOKEN @compose.yaml:16",
	}
	const detail = "credential-named variable passed through from the environment of whoever runs compose"
	for _, tc := range []struct {
		name string
		env  []string
	}{
		{"unset in the auditing environment", nil},
		{"set in the auditing environment", []string{
			"ANTHROPIC_API_KEY=" + "sk-ant-FAKEFAKEFAKEFAKEFAKEFAKE", "GITHUB_TOKEN=x", "HF_TOKEN=x", "NPM_TOKEN=x",
			"VAULT_TOKEN=x", "API_SECRET=x", "GH_TOKEN=x", "DEBUG=1", "LOG_LEVEL=info", "API_TOKEN=x",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, body := range passThrough {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			cs, err := LoadCompose(context.Background(), []string{filepath.Join(dir, "compose.yaml")}, ComposeOptions{Env: tc.env})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range Audit(cs, Options{}).Containers {
				for _, f := range c.Findings {
					if f.Code != CodeSecretInEnv {
						continue
					}
					got = append(got, fmt.Sprintf("%s %s @%s:%d", c.Name, f.Subject, filepath.Base(f.File), f.Line))
					if f.Detail != detail {
						t.Errorf("%s %s: detail %q, want %q", c.Name, f.Subject, f.Detail, detail)
					}
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("secret-in-environment (-want +got):\n%s", diff)
			}
		})
	}
}

// TestComposeProjectDirIsTheWorkspace: without --workspace, the project
// directory bound into a service is its workspace, even beside other binds;
// every further read-write bind stays a finding.
func TestComposeProjectDirIsTheWorkspace(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(t.TempDir(), "home", "ana")
	if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o755); err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	body := `services:
  agent:
    image: x
    volumes:
      - .:/workspace
      - ` + home + `/.ssh:/home/agent/.ssh:ro
      - ./inside:/inside
      - ` + cache + `:/cache
  tool:
    image: x
    working_dir: /src
    volumes:
      - ./a:/src
      - ./b:/out
`
	f := filepath.Join(dir, "compose.yaml")
	if err := os.WriteFile(f, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	cs, err := LoadCompose(context.Background(), []string{f}, ComposeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := Audit(cs, Options{HomeDirs: []string{home}})
	want := []string{
		"agent home-directory-mounted $HOME/.ssh -> /home/agent/.ssh @compose.yaml:6",
		"agent extra-writable-mount $CACHE -> /cache @compose.yaml:8",
		"tool extra-writable-mount $DIR/b -> /out @compose.yaml:14",
	}
	got := renderFindings(r, mountCodes, dir, home)
	for i := range got {
		got[i] = strings.ReplaceAll(got[i], cache, "$CACHE")
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
	for i, w := range []string{dir, filepath.Join(dir, "a")} {
		if got := r.Containers[i].Model.PresumedWorkspace; got != w {
			t.Errorf("%s: presumed workspace %q, want %q", r.Containers[i].Name, got, w)
		}
	}
}
