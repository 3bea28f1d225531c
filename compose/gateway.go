package compose

import (
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"go.yaml.in/yaml/v3"

	"github.com/agentbox/agentbox/netpolicy"
)

// The gateway image's build context, under BuildDir.
const (
	dockerfileName = "Dockerfile"
	binaryName     = "agentbox"
	caName         = "ca-certificates.crt"
)

// dockerfile builds the gateway image from nothing but the static agentbox
// binary and the CA bundle: no shell, no package manager, no libc.
const dockerfile = `# The agentbox gateway, written by agentbox compose: the static agentbox
# binary and the host's CA bundle on an empty image. Nothing is pulled.
FROM scratch
COPY agentbox /agentbox
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
USER %d:%d
ENTRYPOINT ["/agentbox", "gateway"]
CMD ["--config", "%s"]
`

// gateway renders the gateway's config and image build context, and names
// the image after the digest of that context.
func (r *renderer) gateway() error {
	cfg, err := r.gatewayConfig()
	if err != nil {
		return err
	}
	uid, gid := r.o.gatewayIDs()
	df := []byte(fmt.Sprintf(dockerfile, uid, gid, gatewayConfigPath))
	h := sha256.New()
	for _, part := range [][]byte{df, r.o.GatewayBinary, r.o.CABundle} {
		fmt.Fprintf(h, "%d:", len(part))
		h.Write(part)
	}
	r.out.GatewayImage = GatewayImageRepo + ":" + hex.EncodeToString(h.Sum(nil))[:12]
	r.add(GatewayFile, cfg, 0o644)
	r.add(BuildDir+"/"+dockerfileName, df, 0o644)
	r.add(BuildDir+"/"+binaryName, r.o.GatewayBinary, 0o755)
	r.add(BuildDir+"/"+caName, r.o.CABundle, 0o644)
	return nil
}

// gatewayConfig is the standalone gateway's config: listen on both networks,
// take the token from AGENT_GATEWAY_KEY and the real keys from their
// secrets, route and allow what the policy says, and write the decision log
// to the container's output. It is checked by loading it back the way the gateway will.
func (r *renderer) gatewayConfig() ([]byte, error) {
	cfg := netpolicy.Config{
		RunID:    "compose",
		Listen:   fmt.Sprintf("tcp:0.0.0.0:%d", GatewayPort),
		TokenEnv: KeyEnv,
		LogFile:  "/dev/stdout", // the decision log, one JSON line each: docker compose logs gateway
	}
	ups, err := r.upstreams()
	if err != nil {
		return nil, err
	}
	cfg.Upstreams, cfg.Allow = ups, r.plan.Network.Allow
	b, err := toYAML(cfg)
	if err != nil {
		return nil, err
	}
	b = append([]byte("# The gateway's config, written by agentbox compose; see `agentbox gateway --help`.\n"), b...)
	if _, err := netpolicy.ParseConfig(GatewayFile, b); err != nil {
		return nil, fmt.Errorf("the rendered gateway config does not load: %w", err)
	}
	return b, nil
}

// toYAML writes v as block YAML with only the fields its JSON form sets
// (netpolicy.Config's JSON tags omit empty values; its YAML tags do not).
func toYAML(v any) ([]byte, error) {
	j, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var n yaml.Node
	if err := yaml.Unmarshal(j, &n); err != nil {
		return nil, err
	}
	plainStyle(&n)
	walk(&n, dropEmptyMaps)
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&n); err != nil {
		return nil, err
	}
	return buf.Bytes(), enc.Close()
}

// plainStyle drops JSON's flow and quoting styles; quoteAmbiguous puts back
// the quotes a value needs.
func plainStyle(n *yaml.Node) {
	n.Style = 0
	for _, c := range n.Content {
		plainStyle(c)
	}
	quoteAmbiguous(n)
}

// dropEmptyMaps removes the keys of m whose value is an empty mapping (a
// struct without omitempty in its JSON form, such as limits: {}).
func dropEmptyMaps(m *yaml.Node) {
	if m.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(m.Content); {
		if v := m.Content[i+1]; v.Kind == yaml.MappingNode && len(v.Content) == 0 {
			m.Content = append(m.Content[:i], m.Content[i+2:]...)
			continue
		}
		i += 2
	}
}

// elfMachines are the ELF machines of the architectures agentbox has a
// seccomp profile for.
var elfMachines = map[specs.Arch]elf.Machine{
	specs.ArchX86_64:  elf.EM_X86_64,
	specs.ArchAARCH64: elf.EM_AARCH64,
}

// ErrNotStatic is returned for a gateway binary that needs a dynamic loader:
// the gateway image has no libc.
var ErrNotStatic = errors.New("the agentbox binary is not statically linked")

// staticBinary checks that b is a static ELF executable for arch (or the
// native one when arch is empty): no interpreter, no shared libraries.
func staticBinary(b []byte, arch specs.Arch) error {
	fix := "build it with `make build` (CGO_ENABLED=0) and run bin/agentbox"
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		return &InputError{Field: "gateway binary", Msg: fmt.Sprintf("not an ELF executable: %v", err), Fix: fix}
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%w (it has an interpreter); %s", ErrNotStatic, fix)
		}
	}
	if libs, err := f.ImportedLibraries(); err == nil && len(libs) > 0 {
		return fmt.Errorf("%w (it needs %v); %s", ErrNotStatic, libs, fix)
	}
	if m, ok := elfMachines[arch]; ok && f.Machine != m {
		return &InputError{Field: "gateway binary", Msg: fmt.Sprintf("built for %s, not %s", f.Machine, arch), Fix: fix}
	}
	return nil
}

// caBundles are where distributions keep the system CA bundle.
var caBundles = []string{
	"/etc/ssl/certs/ca-certificates.crt", // Debian, Ubuntu, Arch, Alpine
	"/etc/pki/tls/certs/ca-bundle.crt",   // Fedora, RHEL
	"/etc/ssl/ca-bundle.pem",             // openSUSE
	"/etc/ssl/cert.pem",                  // Alpine, macOS
}

// HostCABundle reads the host's CA bundle for the gateway image.
func HostCABundle() ([]byte, error) {
	for _, p := range caBundles {
		if b, err := os.ReadFile(p); err == nil && len(b) > 0 {
			return b, nil
		}
	}
	return nil, fmt.Errorf("no CA bundle found (looked at %v); install ca-certificates", caBundles)
}
