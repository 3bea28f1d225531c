package audit

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fakeEngine serves the Engine API's read endpoints on a unix socket in a
// temp dir, from the captured inspect fixtures.
func fakeEngine(t testing.TB, securityOptions string, networks map[string]string) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "engine.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /containers/{id}/json", func(w http.ResponseWriter, r *http.Request) {
		b, err := os.ReadFile(filepath.Join("testdata", "inspect", r.PathValue("id")+".json"))
		if err != nil {
			http.Error(w, `{"message":"No such container: `+r.PathValue("id")+`"}`, http.StatusNotFound)
			return
		}
		// The API answers one object, inspect prints an array of one.
		s := strings.TrimSpace(string(b))
		fmt.Fprint(w, strings.TrimSuffix(strings.TrimPrefix(s, "["), "]"))
	})
	mux.HandleFunc("GET /networks/{id}", func(w http.ResponseWriter, r *http.Request) {
		body, ok := networks[r.PathValue("id")]
		if !ok {
			http.Error(w, `{"message":"network not found"}`, http.StatusNotFound)
			return
		}
		fmt.Fprint(w, body)
	})
	mux.HandleFunc("GET /info", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"SecurityOptions":[%s]}`, securityOptions)
	})
	srv := &http.Server{Handler: mux}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return sock
}

// fixtureNetworks maps the fixtures' network ids to network objects: the
// hardened container's network is internal, the default bridge is not.
var fixtureNetworks = map[string]string{}

func init() {
	for _, f := range []string{"hardened", "weak"} {
		b, err := os.ReadFile(filepath.Join("testdata", "inspect", f+".json"))
		if err != nil {
			continue
		}
		for _, id := range networkIDsOf(b) {
			internal := f == "hardened"
			fixtureNetworks[id] = fmt.Sprintf(`{"Id":%q,"Internal":%t}`, id, internal)
		}
	}
}

func networkIDsOf(b []byte) []string {
	var out []string
	for _, part := range strings.Split(string(b), `"NetworkID": "`)[1:] {
		id, _, _ := strings.Cut(part, `"`)
		out = append(out, id)
	}
	return out
}

func TestEngineContainer(t *testing.T) {
	sock := fakeEngine(t, `"name=seccomp,profile=default"`, fixtureNetworks)
	e, err := NewEngine("docker", sock)
	if err != nil {
		t.Fatal(err)
	}
	c, err := e.Container(context.Background(), "hardened")
	if err != nil {
		t.Fatal(err)
	}
	if want := []Network{{Name: "agentbox-fixture-internal", Internal: Yes, Why: "read from the engine"}}; !cmp.Equal(c.Networks, want) {
		t.Errorf("networks = %+v, want %+v", c.Networks, want)
	}
	r := Audit([]Container{c}, Options{})
	if want := []string{"user-namespace-not-used info"}; !cmp.Equal(codesOf(r.Containers[0].Findings), want) {
		t.Errorf("hardened container: %v, want %v", codesOf(r.Containers[0].Findings), want)
	}
	if len(r.Unaccepted()) != 0 {
		t.Error("the hardened container does not audit clean")
	}
}

func TestEngineUserNSFromDaemon(t *testing.T) {
	sock := fakeEngine(t, `"name=seccomp,profile=default","name=rootless"`, fixtureNetworks)
	e, _ := NewEngine("podman", sock)
	c, err := e.Container(context.Background(), "weak")
	if err != nil {
		t.Fatal(err)
	}
	if c.UserNS != Yes || c.Source != "podman" {
		t.Errorf("userns = %s, source = %s; want yes, podman", c.UserNS, c.Source)
	}
}

func TestEngineErrors(t *testing.T) {
	sock := fakeEngine(t, ``, nil)
	e, _ := NewEngine("docker", sock)
	if _, err := e.Container(context.Background(), "nope"); !errors.Is(err, ErrNoSuchContainer) {
		t.Errorf("missing container: %v", err)
	}
	// A network object that cannot be read leaves the flag unknown.
	c, err := e.Container(context.Background(), "hardened")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Networks) != 1 || c.Networks[0].Internal != Unknown {
		t.Errorf("networks = %+v", c.Networks)
	}
	dead, _ := NewEngine("docker", filepath.Join(t.TempDir(), "none.sock"))
	if _, err := dead.Container(context.Background(), "x"); !errors.Is(err, ErrEngineUnavailable) {
		t.Errorf("dead socket: %v", err)
	}
	if _, err := NewEngine("containerd", ""); err == nil {
		t.Error("unknown engine kind accepted")
	}
}

func TestDefaultSocket(t *testing.T) {
	env := map[string]string{"DOCKER_HOST": "unix:///x/d.sock"}
	get := func(k string) string { return env[k] }
	if got := DefaultSocket("docker", get); got != "/x/d.sock" {
		t.Errorf("docker: %s", got)
	}
	env = map[string]string{"DOCKER_HOST": "tcp://127.0.0.1:2375"}
	if got := DefaultSocket("docker", get); got != "/var/run/docker.sock" {
		t.Errorf("docker tcp: %s", got)
	}
}

// TestEngineLabelledContainer: a container agentbox compose wrote, read
// through the engine: its workspace comes from its label, and the missing
// user namespace is the accepted residual, unless the daemon remaps users,
// when the audit sees the namespace and the label accepts nothing.
func TestEngineLabelledContainer(t *testing.T) {
	for _, tc := range []struct {
		daemon string
		want   []string
	}{
		{`"name=seccomp,profile=default"`, []string{"user-namespace-not-used info accepted"}},
		{`"name=seccomp,profile=default","name=userns"`, nil},
	} {
		sock := fakeEngine(t, tc.daemon, fixtureNetworks)
		e, _ := NewEngine("docker", sock)
		c, err := e.Container(context.Background(), "labelled")
		if err != nil {
			t.Fatal(err)
		}
		r := Audit([]Container{c}, Options{})
		cr := r.Containers[0]
		if diff := cmp.Diff(tc.want, codesOf(cr.Findings)); diff != "" {
			t.Errorf("daemon %s: findings (-want +got):\n%s", tc.daemon, diff)
		}
		if cr.Model.LabeledWorkspace != "/work/project" || len(cr.Notes) != 0 {
			t.Errorf("daemon %s: labelled workspace %q, notes %q", tc.daemon, cr.Model.LabeledWorkspace, cr.Notes)
		}
	}
}

// BenchmarkEngineContainer is the time to audit a running container through
// the Engine API (a local fake engine serving a captured inspect).
func BenchmarkEngineContainer(b *testing.B) {
	e, err := NewEngine("docker", fakeEngine(b, `"name=seccomp,profile=default"`, fixtureNetworks))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for b.Loop() {
		c, err := e.Container(ctx, "weak")
		if err != nil {
			b.Fatal(err)
		}
		Audit([]Container{c}, Options{})
	}
}
