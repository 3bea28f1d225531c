package audit

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// KindKube is a Kubernetes manifest: a file of one or more YAML documents,
// `kubectl get -o yaml` List output, or a directory of them.
const KindKube = "kube"

// SourceKube is the Source of a model read from a Kubernetes manifest.
const SourceKube = "kube"

// KubeFiles are the files a target names: the file, or the manifests of
// a directory (files that are not Kubernetes objects are skipped), sorted.
func KubeFiles(p string) ([]string, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return nil, &InputError{File: p, Err: err}
	}
	if !fi.IsDir() {
		return []string{p}, nil
	}
	ents, err := os.ReadDir(p)
	if err != nil {
		return nil, &InputError{File: p, Err: err}
	}
	var out []string
	for _, e := range ents {
		ext := strings.ToLower(filepath.Ext(e.Name()))
		if e.IsDir() || (ext != ".yaml" && ext != ".yml" && ext != ".json") {
			continue
		}
		f := filepath.Join(p, e.Name())
		if head, err := readHead(f); err == nil && isKubeManifest(head) { // package.json is no manifest
			out = append(out, f)
		}
	}
	sort.Strings(out)
	return out, nil
}

var (
	kubeAPIVersionRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^apiVersion:\s*\S`) })
	kubeKindRE       = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^kind:\s*[A-Z]\w*`) })
	kubeJSONRE       = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\{\s*"apiVersion"\s*:|"kind"\s*:\s*"[A-Z]\w*"`) })
)

// isKubeManifest reports whether a file's head is a Kubernetes object:
// YAML with apiVersion and kind at the top level (no compose file has
// them), or JSON that opens with apiVersion (kubectl get -o json).
func isKubeManifest(head []byte) bool {
	h := bytes.TrimSpace(head)
	if len(h) > 0 && h[0] == '{' {
		return kubeJSONRE().Match(h) && bytes.Contains(h, []byte(`"apiVersion"`)) && !bytes.Contains(h, []byte(`"ociVersion"`))
	}
	return kubeAPIVersionRE().Match(head) && kubeKindRE().Match(head)
}

// isKubeDir reports whether a directory holds a Kubernetes manifest.
func isKubeDir(dir string) bool {
	files, err := KubeFiles(dir)
	return err == nil && len(files) > 0
}
