// Command schemagen writes the JSON schemas kubeconform validates agentbox
// kube's rendering against, offline, from the Kubernetes OpenAPI (v2) that
// the k8s.io/kubernetes module ships (api/openapi-spec/swagger.json) at the
// version tools/kube/go.mod names. Each schema is standalone (references
// inlined) and strict (an object with properties admits no other field),
// named as kubeconform's default location template looks them up:
// KIND-GROUP-VERSION.json, lower case, KIND-VERSION.json for the core group.
//
//	cd tools/kube && go run ./schemagen -out ../../kube/testdata/kubeconform \
//	  "$(go list -m -f '{{.Dir}}' k8s.io/kubernetes)/api/openapi-spec/swagger.json" \
//	  /var/cache/agentbox-test/kube/crds-*/*.yaml
//
// Each further argument is a CustomResourceDefinition (the ones
// tools/kube/crds.txt pins, which scripts/kube-up.sh fetches): every served
// version's openAPIV3Schema (but a deprecated one's) becomes a schema of
// the same form.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"
)

// kinds are the objects agentbox kube renders, by OpenAPI definition.
var kinds = []string{
	"io.k8s.api.core.v1.Namespace",
	"io.k8s.api.core.v1.ServiceAccount",
	"io.k8s.api.core.v1.ConfigMap",
	"io.k8s.api.core.v1.Service",
	"io.k8s.api.core.v1.Pod",
	"io.k8s.api.core.v1.PersistentVolumeClaim",
	"io.k8s.api.apps.v1.Deployment",
	"io.k8s.api.apps.v1.DaemonSet",
	"io.k8s.api.batch.v1.Job",
	"io.k8s.api.networking.v1.NetworkPolicy",
}

func main() {
	out := flag.String("out", "", "output directory")
	flag.Parse()
	if *out == "" || flag.NArg() < 1 {
		fmt.Fprintln(os.Stderr, "usage: schemagen -out DIR swagger.json [crd.yaml...]")
		os.Exit(2)
	}
	if err := run(flag.Arg(0), *out); err != nil {
		fmt.Fprintln(os.Stderr, "schemagen:", err)
		os.Exit(1)
	}
	for _, crd := range flag.Args()[1:] {
		if err := runCRD(crd, *out); err != nil {
			fmt.Fprintln(os.Stderr, "schemagen:", err)
			os.Exit(1)
		}
	}
}

// runCRD writes one schema per served version of a CustomResourceDefinition.
func runCRD(file, out string) error {
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	var crd struct {
		Kind string `json:"kind"`
		Spec struct {
			Group string `json:"group"`
			Names struct {
				Kind string `json:"kind"`
			} `json:"names"`
			Versions []struct {
				Name       string `json:"name"`
				Served     bool   `json:"served"`
				Deprecated bool   `json:"deprecated"`
				Schema     struct {
					OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(b, &crd); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	if crd.Kind != "CustomResourceDefinition" {
		return fmt.Errorf("%s: a %s, not a CustomResourceDefinition", file, crd.Kind)
	}
	for _, v := range crd.Spec.Versions {
		if !v.Served || v.Deprecated || v.Schema.OpenAPIV3Schema == nil {
			continue
		}
		s := structural(v.Schema.OpenAPIV3Schema, true)
		s["$schema"] = "http://json-schema.org/draft-07/schema#"
		name := strings.ToLower(crd.Spec.Names.Kind) + "-" + strings.ToLower(strings.Split(crd.Spec.Group, ".")[0]) + "-" + v.Name + ".json"
		j, err := json.Marshal(s)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(out, name), append(j, '\n'), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// structural converts a CRD's structural schema as the API server reads
// it: an object with properties admits no other field (the server prunes
// or, with strict field validation, refuses them) unless it preserves
// unknown fields, x-kubernetes-int-or-string is a string or an integer,
// and nullable adds null. Descriptions are dropped.
func structural(s map[string]any, root bool) map[string]any {
	out := map[string]any{}
	for k, v := range s {
		switch k {
		case "description":
		case "properties":
			props := map[string]any{}
			for pk, pv := range v.(map[string]any) {
				props[pk] = structural(pv.(map[string]any), false)
			}
			out[k] = props
		case "items", "additionalProperties":
			if m, ok := v.(map[string]any); ok {
				out[k] = structural(m, false)
				continue
			}
			out[k] = v
		default:
			out[k] = v
		}
	}
	if out["x-kubernetes-int-or-string"] == true {
		delete(out, "type")
		out["oneOf"] = []any{map[string]any{"type": "string"}, map[string]any{"type": "integer"}}
	}
	if _, ok := out["properties"]; ok && out["x-kubernetes-preserve-unknown-fields"] != true {
		if _, set := out["additionalProperties"]; !set {
			out["additionalProperties"] = false
		}
	}
	if t, ok := out["type"].(string); ok && out["nullable"] == true && !root {
		out["type"] = []any{t, "null"}
	}
	return out
}

func run(spec, out string) error {
	b, err := os.ReadFile(spec)
	if err != nil {
		return err
	}
	var doc struct {
		Definitions map[string]map[string]any `json:"definitions"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return fmt.Errorf("%s: %w", spec, err)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for _, name := range kinds {
		def, ok := doc.Definitions[name]
		if !ok {
			return fmt.Errorf("%s: no definition %s", spec, name)
		}
		gvk, ok := def["x-kubernetes-group-version-kind"].([]any)
		if !ok || len(gvk) != 1 {
			return fmt.Errorf("%s: %s has no single group-version-kind", spec, name)
		}
		g := gvk[0].(map[string]any)
		s, err := inline(doc.Definitions, def, map[string]bool{name: true}, true)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		s["$schema"] = "http://json-schema.org/draft-07/schema#"
		file := strings.ToLower(g["kind"].(string))
		if grp := g["group"].(string); grp != "" {
			file += "-" + strings.ToLower(strings.Split(grp, ".")[0])
		}
		file += "-" + g["version"].(string) + ".json"
		j, err := json.Marshal(s)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(out, file), append(j, '\n'), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// inline copies a schema with every $ref replaced by its (converted)
// definition, IntOrString as a string or an integer, each object with
// properties closed to other fields, and every field nullable, as the API
// server's decoder treats an explicit null as absent. seen breaks cycles.
func inline(defs map[string]map[string]any, s map[string]any, seen map[string]bool, root bool) (map[string]any, error) {
	if ref, ok := s["$ref"].(string); ok {
		name := strings.TrimPrefix(ref, "#/definitions/")
		if name == "io.k8s.apimachinery.pkg.util.intstr.IntOrString" {
			return map[string]any{"oneOf": []any{map[string]any{"type": "string"}, map[string]any{"type": "integer"}}}, nil
		}
		if seen[name] {
			return nil, fmt.Errorf("recursive definition %s", name)
		}
		def, ok := defs[name]
		if !ok {
			return nil, fmt.Errorf("no definition %s", name)
		}
		next := map[string]bool{name: true}
		for k := range seen {
			next[k] = true
		}
		return inline(defs, def, next, root)
	}
	out := map[string]any{}
	for k, v := range s {
		switch k {
		case "description", "x-kubernetes-group-version-kind":
			continue
		case "properties":
			props := map[string]any{}
			for pk, pv := range v.(map[string]any) {
				c, err := inline(defs, pv.(map[string]any), seen, false)
				if err != nil {
					return nil, err
				}
				props[pk] = c
			}
			out[k] = props
		case "items", "additionalProperties":
			if m, ok := v.(map[string]any); ok {
				c, err := inline(defs, m, seen, false)
				if err != nil {
					return nil, err
				}
				out[k] = c
				continue
			}
			out[k] = v
		default:
			out[k] = v
		}
	}
	if _, ok := out["properties"]; ok {
		if _, set := out["additionalProperties"]; !set {
			out["additionalProperties"] = false
		}
	}
	if t, ok := out["type"].(string); ok && !root {
		out["type"] = []any{t, "null"}
	}
	return out, nil
}
