package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Kinds of audit target.
const (
	KindContainer = "container" // a running container, read through the engine API
	KindOCI       = "oci"       // an OCI bundle directory or config.json
	KindInspect   = "inspect"   // docker/podman inspect JSON in a file
	KindCompose   = "compose"   // a compose file
)

// LoadOptions says how to read targets.
type LoadOptions struct {
	// Kind forces every target's kind; empty detects it (Detect).
	Kind string
	// Engine is "docker" or "podman"; Host its socket ("" for the default).
	Engine, Host string
	// Compose loads the compose targets, all at once as one project, and
	// Kube the Kubernetes manifests, as one input; nil refuses that kind.
	// They live in audit/composeaudit and audit/kubeaudit, which the
	// launch path does not link (README, "Three binaries").
	Compose func(ctx context.Context, files []string) ([]Container, error)
	Kube    func(paths []string) ([]Container, error)
	// User, when set, audits that user account instead of targets
	// (LoadAndAudit), reading the host as Account says.
	User    string
	Account AccountOptions
}

// composeNames are the file names docker compose looks for in a directory.
var composeNames = []string{"compose.yaml", "compose.yml", "docker-compose.yaml", "docker-compose.yml"}

// Detect says what kind of target t is: a path that does not exist is a
// container name; a directory holding config.json is an OCI bundle, one
// holding a compose file is that compose file; a JSON file with ociVersion
// is an OCI config, other JSON is inspect output; anything else is compose.
// It returns the path to load (a directory's file).
func Detect(t string) (kind, path string, err error) {
	fi, err := os.Stat(t)
	if errors.Is(err, os.ErrNotExist) {
		if looksLikePath(t) {
			return "", "", &InputError{File: t, Err: errors.New("no such file or directory (a container name has no / and no .json/.yaml suffix)")}
		}
		return KindContainer, t, nil
	}
	if err != nil {
		return "", "", fmt.Errorf("audit target %s: %w", t, err)
	}
	if fi.IsDir() {
		return detectDir(t)
	}
	head, err := readHead(t)
	if err != nil {
		return "", "", err
	}
	return detectFile(t, head), t, nil
}

// looksLikePath is true for a target no container can be named: one with a
// slash or a file suffix.
func looksLikePath(t string) bool {
	ext := strings.ToLower(filepath.Ext(t))
	return strings.Contains(t, "/") || ext == ".json" || ext == ".yaml" || ext == ".yml"
}

func detectDir(dir string) (string, string, error) {
	if _, err := os.Stat(filepath.Join(dir, "config.json")); err == nil {
		return KindOCI, dir, nil
	}
	for _, n := range composeNames {
		if _, err := os.Stat(filepath.Join(dir, n)); err == nil {
			return KindCompose, filepath.Join(dir, n), nil
		}
	}
	if isKubeDir(dir) {
		return KindKube, dir, nil
	}
	return "", "", &InputError{File: dir, Err: errors.New("directory holds neither an OCI config.json, a compose file nor Kubernetes manifests")}
}

func readHead(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, &InputError{File: p, Err: err}
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 64<<10))
	if err != nil {
		return nil, &InputError{File: p, Err: err}
	}
	return b, nil
}

func detectFile(p string, head []byte) string {
	ext := strings.ToLower(filepath.Ext(p))
	if isKubeManifest(head) {
		return KindKube
	}
	if ext == ".yaml" || ext == ".yml" {
		return KindCompose
	}
	h := bytes.TrimSpace(head)
	switch {
	case len(h) > 0 && h[0] == '{' && bytes.Contains(h, []byte(`"ociVersion"`)):
		return KindOCI
	case len(h) > 0 && (h[0] == '[' || h[0] == '{'):
		return KindInspect
	}
	return KindCompose
}

// Load reads every target into models, in order. Compose targets are loaded
// together as one project (like `docker compose -f a -f b`).
func Load(ctx context.Context, targets []string, lo LoadOptions) ([]Container, error) {
	var compose, kube []string
	var cs []Container
	for _, t := range targets {
		kind, p, err := detectKind(t, lo.Kind)
		if err != nil {
			return nil, err
		}
		switch kind {
		case KindCompose:
			compose = append(compose, p)
			continue
		case KindKube: // one input, so that policies apply across files
			kube = append(kube, p)
			continue
		}
		got, err := loadOne(ctx, kind, p, lo)
		if err != nil {
			return nil, err
		}
		cs = append(cs, got...)
	}
	if len(compose) > 0 {
		if lo.Compose == nil {
			return nil, &InputError{File: compose[0], Err: errors.New("a compose file: this program does not read compose files (agentbox audit does)")}
		}
		got, err := lo.Compose(ctx, compose)
		if err != nil {
			return nil, err
		}
		cs = append(cs, got...)
	}
	if len(kube) > 0 {
		if lo.Kube == nil {
			return nil, &InputError{File: kube[0], Err: errors.New("a Kubernetes manifest: this program does not read manifests (agentbox audit does)")}
		}
		got, err := lo.Kube(kube)
		if err != nil {
			return nil, err
		}
		cs = append(cs, got...)
	}
	return cs, nil
}

func detectKind(t, forced string) (string, string, error) {
	if forced == "" {
		return Detect(t)
	}
	switch forced {
	case KindContainer, KindOCI, KindInspect, KindCompose, KindKube:
		return forced, t, nil
	}
	return "", "", fmt.Errorf("source %q: want container, oci, inspect, compose or kube", forced)
}

func loadOne(ctx context.Context, kind, p string, lo LoadOptions) ([]Container, error) {
	switch kind {
	case KindOCI:
		c, err := LoadOCI(p)
		return []Container{c}, err
	case KindInspect:
		return LoadInspect(p)
	}
	e, err := NewEngine(orDefault(lo.Engine, "docker"), lo.Host)
	if err != nil {
		return nil, err
	}
	c, err := e.Container(ctx, p)
	return []Container{c}, err
}

// WriteJSON writes the report as one indented JSON document with a
// `containers` array.
func WriteJSON(w io.Writer, r Report) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("write JSON: %w", err)
	}
	return nil
}
