package audit

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/policy"
)

func TestSocketGrantDecides(t *testing.T) {
	tests := []struct {
		name     string
		uid      int
		engine   string
		rootless Tri
		root     Tri
		want     string // in the clause; "" for no clause
	}{
		{"root's file", 0, "", "", Yes, "is root on the host: root owns the socket"},
		{"a user's file", 1001, "", "", No, "has the privileges of ana (uid 1001) on the host, not root's: that user owns the socket"},
		{"rootful engine", 0, "podman", No, Yes, "the podman engine behind it says it is not rootless, and root owns the socket"},
		{"rootful engine, socket handed to a user", 1001, "docker", No, Yes, "is root on the host: the docker engine behind it says it is not rootless, although ana (uid 1001) owns the socket"},
		{"rootless engine", 1001, "podman", Yes, No, "has the privileges of ana (uid 1001) on the host, not root's: the podman engine behind it says it is rootless"},
		{"rootless engine, root's file", 0, "podman", Yes, Unknown, ""},
		{"engine not asked", 1001, "podman", Unknown, No, "that user owns the socket"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := &SocketGrant{UID: tc.uid, User: "ana", Root: No}
			if tc.uid == 0 {
				g.User, g.Root = "root", Yes
			}
			if tc.engine != "" {
				g.fromEngine(tc.engine, tc.rootless)
			}
			if g.Root != tc.root {
				t.Errorf("root = %s, want %s", g.Root, tc.root)
			}
			got := g.clause()
			if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
				t.Errorf("clause = %q, want it to contain %q", got, tc.want)
			}
		})
	}
	if (*SocketGrant)(nil).clause() != "" {
		t.Error("a nil grant has a clause")
	}
}

// TestSocketDetailKeepsTheClassifiersWords: the path classifier says what
// the path is; the grant replaces only whose privileges it hands out.
func TestSocketDetailKeepsTheClassifiersWords(t *testing.T) {
	p := "/run/user/1001/podman/podman.sock"
	c := policy.ClassifyBind(p, policy.BindFacts{})
	user := &SocketGrant{UID: 1001, User: "ana", Root: No}
	user.fromEngine("podman", Yes)
	got := socketDetail(p, c, user)
	if want := p + " is a container engine socket by its name or directory: whoever can write to it has the privileges of ana (uid 1001)"; !strings.HasPrefix(got, want) {
		t.Errorf("detail = %q, want it to start %q", got, want)
	}
	if strings.Contains(got, "is root on the host") {
		t.Errorf("a rootless socket's detail says root: %q", got)
	}
	if got := socketDetail(p, c, nil); got != c.Describe(p) {
		t.Errorf("without a grant: %q, want the classifier's %q", got, c.Describe(p))
	}
	same := policy.ClassifyBind("/srv/innocent", policy.BindFacts{SameFileAs: "/run/docker.sock"})
	root := &SocketGrant{Root: Yes}
	if got, want := socketDetail("/srv/innocent", same, root), "/srv/innocent is the same file as the container engine socket /run/docker.sock: whoever can write to it is root on the host: root owns the socket"; !strings.HasPrefix(got, want) {
		t.Errorf("detail = %q, want it to start %q", got, want)
	}
}

// fakePodman serves libpod info (rootless or not) and one container,
// "sock", that binds the engine's own socket where clients look for
// Podman's, on a unix socket owned by uid.
func fakePodman(t *testing.T, rootless bool, uid int) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "podman.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	if uid != os.Geteuid() {
		if err := os.Chown(sock, uid, uid); err != nil {
			t.Fatal(err)
		}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+podmanInfoPath, func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"host":{"security":{"rootless":%t},"idMappings":{"uidmap":[{"container_id":0,"host_id":%d,"size":1}]}}}`, rootless, uid)
	})
	mux.HandleFunc("GET /containers/sock/json", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"Id":"0123456789abcdef","Name":"sock","Config":{"Image":"busybox"},
			"HostConfig":{"NetworkMode":"none","UsernsMode":"host"},
			"Mounts":[{"Type":"bind","Source":%q,"Destination":"/run/podman/podman.sock","RW":true}]}`, sock)
	})
	srv := &http.Server{Handler: mux}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return sock
}

func socketFinding(t *testing.T, c Container) Finding {
	t.Helper()
	return findingOf(t, c, CodeContainerSocket)
}

func findingOf(t *testing.T, c Container, code string) Finding {
	t.Helper()
	for _, f := range Audit([]Container{c}, Options{}).Containers[0].Findings {
		if f.Code == code {
			return f
		}
	}
	t.Fatalf("no %s finding", code)
	return Finding{}
}

func TestEnginePodmanSocketGrant(t *testing.T) {
	// A rootless engine's socket belongs to an ordinary user: as root, the
	// test hands it to one; otherwise it is the test's own.
	user := os.Geteuid()
	if user == 0 {
		user = 4242
	}
	tests := []struct {
		name     string
		rootless bool
		uid      int
		userns   Tri
		want     string
	}{
		{"rootful", false, os.Geteuid(), No, "whoever can write to it is root on the host: the podman engine behind it says it is not rootless"},
		{"rootless", true, user, Yes, "on the host, not root's: the podman engine behind it says it is rootless"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, err := NewEngine("podman", fakePodman(t, tc.rootless, tc.uid))
			if err != nil {
				t.Fatal(err)
			}
			c, err := e.Container(context.Background(), "sock")
			if err != nil {
				t.Fatal(err)
			}
			// Rootless Podman's --userns=host is the user's namespace.
			if c.UserNS != tc.userns {
				t.Errorf("userns = %s, want %s", c.UserNS, tc.userns)
			}
			// Rootless, root in the container is the engine's user.
			if wantRoot := map[bool]string{true: userName(tc.uid)}[tc.rootless]; c.RootUser != wantRoot {
				t.Errorf("root user = %q, want %q", c.RootUser, wantRoot)
			}
			g := c.Mounts[0].Grant
			if g == nil || g.Engine != "podman" || g.UID != tc.uid {
				t.Fatalf("grant = %+v, want podman's, owned by uid %d", g, tc.uid)
			}
			if f := socketFinding(t, c); !strings.Contains(f.Detail, tc.want) || !strings.Contains(f.Detail, fmt.Sprintf("uid %d", tc.uid)) && tc.rootless {
				t.Errorf("detail = %q, want it to contain %q", f.Detail, tc.want)
			}
			root := findingOf(t, c, CodeRunsAsRoot)
			if tc.rootless && (root.Severity != Medium || !strings.Contains(root.Detail, "root inside is "+userName(tc.uid))) {
				t.Errorf("rootless root: %s %q, want medium, the user's", root.Severity, root.Detail)
			}
		})
	}
}
