package compose

import (
	"bytes"
	"fmt"
	"regexp"

	"github.com/compose-spec/compose-go/v2/types"
	"go.yaml.in/yaml/v3"
)

// header starts every compose.yaml agentbox writes.
const header = `Written by agentbox compose. Check it after any edit with:
  agentbox compose --check compose.yaml
It holds the sandbox's gateway key: keep it private (mode 0600).`

// Marshal writes p as compose YAML that both compose-go (docker compose v2,
// podman compose) and docker-compose 1.29 read the same way: compose-go's
// own marshalling, with strings that YAML 1.1 would read as another type
// quoted, and depends_on's "required: true" (the default, and a key 1.29
// rejects) left out.
func Marshal(p *types.Project) ([]byte, error) {
	b, err := p.MarshalYAML()
	if err != nil {
		return nil, fmt.Errorf("marshal compose project: %w", err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("re-read compose project: %w", err)
	}
	if len(doc.Content) != 1 {
		return nil, fmt.Errorf("compose project marshalled to %d documents", len(doc.Content))
	}
	dropDefaultRequired(doc.Content[0])
	walk(&doc, quoteAmbiguous)
	doc.HeadComment = header
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, err
	}
	return buf.Bytes(), enc.Close()
}

func walk(n *yaml.Node, f func(*yaml.Node)) {
	f(n)
	for _, c := range n.Content {
		walk(c, f)
	}
}

// yaml11 matches plain scalars that a YAML 1.1 reader (PyYAML, used by
// docker-compose 1.x) resolves to a boolean, null, integer (including
// base 60, such as 1000:50), or float, while YAML 1.2 reads a string.
var yaml11 = regexp.MustCompile(`^(?:y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF|~|null|Null|NULL|` +
	`[-+]?(?:0b[01_]+|0[0-7_]+|0x[0-9a-fA-F_]+|[0-9][0-9_]*(?::[0-5]?[0-9])*|[0-9][0-9_]*(?::[0-5]?[0-9])*\.[0-9_]*|\.[0-9_]+)(?:[eE][-+][0-9]+)?|` +
	`[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$`)

// quoteAmbiguous double-quotes a plain string scalar that YAML 1.1 would
// read as something else.
func quoteAmbiguous(n *yaml.Node) {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" && n.Style == 0 && (n.Value == "" || yaml11.MatchString(n.Value)) {
		n.Style = yaml.DoubleQuotedStyle
	}
}

// dropDefaultRequired removes services.*.depends_on.*.required when true.
func dropDefaultRequired(root *yaml.Node) {
	services := mapValue(root, "services")
	if services == nil {
		return
	}
	for i := 1; i < len(services.Content); i += 2 {
		deps := mapValue(services.Content[i], "depends_on")
		if deps == nil {
			continue
		}
		for j := 1; j < len(deps.Content); j += 2 {
			dep := deps.Content[j]
			if v := mapValue(dep, "required"); v != nil && v.Value == "true" {
				deleteKey(dep, "required")
			}
		}
	}
}

func mapValue(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

func deleteKey(m *yaml.Node, key string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content = append(m.Content[:i], m.Content[i+2:]...)
			return
		}
	}
}
