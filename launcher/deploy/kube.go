package deploy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/agentbox/agentbox/audit"
	"github.com/agentbox/agentbox/audit/manifest"
	"github.com/agentbox/agentbox/compose"
	"github.com/agentbox/agentbox/host"
	"github.com/agentbox/agentbox/kube"
	. "github.com/agentbox/agentbox/launcher"
	"github.com/agentbox/agentbox/ledger"
	"github.com/agentbox/agentbox/netpolicy"
	"github.com/agentbox/agentbox/policy"
)

// KubeConfig drives the Kubernetes pipeline (agentbox kube): Policy → Plan
// → kube render → audit and Pod Security evaluation of the rendering →
// the manifest written.
type KubeConfig struct {
	// Policy, Sources, Cwd, Getenv, Environ and Args are as in
	// ComposeConfig.
	Policy  policy.Policy
	Sources policy.Sources
	Cwd     string
	Getenv  func(string) string
	Environ []string
	Args    []string
	// Agent, Image and Command are as in ComposeConfig.
	Agent, Image string
	Command      []string
	// Namespace, GatewayImage and GatewayIP are kube.Options'.
	Namespace, GatewayImage, GatewayIP string
	// OutDir is the output directory ("" for Cwd/agentbox-kube).
	OutDir string
	// Job renders the agent as a Job instead of a Pod (kube.Options.Job);
	// Format is kube.Options.Format.
	Job    bool
	Format string
	// Profiles, InstallerImage, Arch, WorkspaceClaim and WorkspaceSize are
	// kube.Options'.
	Profiles, InstallerImage, Arch string
	WorkspaceClaim, WorkspaceSize  string
	// Extra are positional arguments the command line had, which are an
	// error (a command goes after --).
	Extra []string
	// PolicyInputs, when Policy and Sources are not given, makes them from
	// the working directory (the CLI's policy flags); nil uses Policy and
	// Sources as they are.
	PolicyInputs func(cwd string, getenv func(string) string) (policy.Policy, policy.Sources, error)
}

// KubeResult is what the Kubernetes pipeline produced.
type KubeResult struct {
	Output *kube.Output
	// Report is the audit of the rendering; OutDir where it was written.
	Report audit.Report
	OutDir string
	// LedgerErr is why the audit's record could not be appended (a warning).
	LedgerErr error
}

// Kube renders the manifests the policy describes, audits them (agentbox's
// checks and the Pod Security evaluator at restricted) and writes them only
// when nothing fails: into a fresh directory beside the output, renamed
// into place, so a failure leaves nothing half-written.
func Kube(ctx context.Context, cfg KubeConfig) (KubeResult, error) {
	plan, opts, err := kubeInputs(&cfg)
	if err != nil {
		return KubeResult{}, err
	}
	start := time.Now().UTC()
	out, err := kube.Render(plan, opts)
	if err != nil {
		return KubeResult{}, WithKind(KindUsage, err)
	}
	res := KubeResult{Output: out, OutDir: kubeOutDir(cfg)}
	tmp, err := os.MkdirTemp(filepath.Dir(res.OutDir), ".agentbox-kube-")
	if err != nil {
		return res, fmt.Errorf("write the manifests: %w", err)
	}
	defer os.RemoveAll(tmp)
	if err := writeKubeFiles(tmp, out); err != nil {
		return res, fmt.Errorf("write the manifests: %w", err)
	}
	if res.Report, err = auditKube(ctx, tmp, plan, out); err != nil {
		return res, err
	}
	if n := kubeFailures(res.Report, out); n > 0 {
		res.LedgerErr = cfg.record(start, res, ExitRefused, fmt.Sprintf("refused: %d finding(s) failing; nothing written", n))
		return res, WithKind(KindRefused, fmt.Errorf("the rendered manifests fail their own audit (%d finding(s)); nothing was written", n))
	}
	if err := replaceDir(tmp, res.OutDir); err != nil {
		return res, err
	}
	res.LedgerErr = cfg.record(start, res, ExitOK, "written to "+res.OutDir)
	return res, nil
}

// kubeInputs resolves the plan for a pod (the image is the root) and
// gathers the renderer's options.
func kubeInputs(cfg *KubeConfig) (*policy.Plan, kube.Options, error) {
	o := kube.Options{
		Image: cfg.Image, Namespace: cfg.Namespace, GatewayImage: cfg.GatewayImage, GatewayIP: cfg.GatewayIP, Command: cfg.Command, Job: cfg.Job, Format: cfg.Format,
		Profiles: cfg.Profiles, InstallerImage: cfg.InstallerImage, Arch: cfg.Arch, WorkspaceClaim: cfg.WorkspaceClaim, WorkspaceSize: cfg.WorkspaceSize,
	}
	if err := cfg.defaults(); err != nil {
		return nil, o, err
	}
	if cfg.Policy.Runtime != "" || cfg.Policy.Rootfs != "" {
		return nil, o, WithKind(KindUsage, errors.New("--runtime and --rootfs do not apply: the node picks the runtime and --image is the root"))
	}
	p, _, err := LoadPolicy(cfg.Policy, cfg.Sources)
	if err != nil {
		return nil, o, err
	}
	h, err := host.Capture(cfg.Environ)
	if err != nil {
		return nil, o, err
	}
	// The Kubernetes target: the node's runtime starts the pod, the image
	// is the root, the gateway is a pod of its own, and this host's LSM,
	// ids and workspace sockets do not apply (policy.TargetKubernetes).
	plan, err := policy.Resolve(p, compose.PlanArgv, h, policy.Run{Target: policy.TargetKubernetes})
	if err != nil {
		return nil, o, err
	}
	if cfg.Agent != "" {
		if len(cfg.Command) > 0 {
			return nil, o, WithKind(KindUsage, errors.New("--agent: give --agent or a command after --, not both"))
		}
		if o.Command, err = compose.AgentCommand(cfg.Agent); err != nil {
			return nil, o, WithKind(KindUsage, err)
		}
	}
	o.Token, err = netpolicy.NewToken()
	return plan, o, err
}

// defaults fills what the CLI leaves to the launcher: the working
// directory, the environment and the policy from the flags.
func (cfg *KubeConfig) defaults() error {
	if len(cfg.Extra) > 0 {
		return WithKind(KindUsage, fmt.Errorf("unexpected argument %q; a command goes after --", cfg.Extra[0]))
	}
	var err error
	if cfg.Cwd == "" {
		if cfg.Cwd, err = os.Getwd(); err != nil {
			return err
		}
	}
	if cfg.Environ == nil {
		cfg.Environ = os.Environ()
	}
	if cfg.PolicyInputs != nil {
		getenv := cfg.Getenv
		if getenv == nil {
			getenv = func(string) string { return "" }
		}
		cfg.Policy, cfg.Sources, err = cfg.PolicyInputs(cfg.Cwd, getenv)
	}
	return err
}

func kubeOutDir(cfg KubeConfig) string {
	out := cfg.OutDir
	if out == "" {
		out = "agentbox-kube"
	}
	if !filepath.IsAbs(out) {
		out = filepath.Join(cfg.Cwd, out)
	}
	return filepath.Clean(out)
}

// writeKubeFiles writes the manifest and the rendering's other files
// (the profiles) into the fresh directory dir, each created exclusively.
func writeKubeFiles(dir string, out *kube.Output) error {
	files := map[string][]byte{kube.ManifestFile: out.Manifest}
	for name, b := range out.Files {
		files[name] = b
	}
	for name, b := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return err
		}
		_, err = f.Write(b)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// auditKube audits the written rendering as `agentbox audit` would, with
// the plan's acceptances and the rendering's declared residuals; the
// agent's Localhost seccomp profile is read from the written files. The
// profile installer's containers are audited with its own acceptances,
// which cover nothing else.
func auditKube(ctx context.Context, dir string, plan *policy.Plan, out *kube.Output) (audit.Report, error) {
	ko := manifest.KubeOptions{}
	if out.SeccompRoot != "" {
		ko.SeccompRoot = filepath.Join(dir, filepath.FromSlash(out.SeccompRoot))
	}
	cs, err := audit.Load(ctx, []string{dir}, manifest.Loaders(audit.LoadOptions{Kind: audit.KindKube}, manifest.ComposeOptions{}, ko))
	if err != nil {
		return audit.Report{}, fmt.Errorf("audit the rendered manifests: %w", err)
	}
	accept := append(append([]policy.Acceptance(nil), plan.Accepted...), out.Accept...)
	var own, installer []audit.Container
	for _, c := range cs {
		if isInstaller(out, c.Name) {
			installer = append(installer, c)
		} else {
			own = append(own, c)
		}
	}
	r := audit.Audit(own, audit.Options{Accept: accept})
	if len(installer) > 0 {
		ir := audit.Audit(installer, audit.Options{Accept: append(accept, out.Installer.Accept...)})
		r.Containers = append(r.Containers, ir.Containers...)
	}
	return r, nil
}

// isInstaller reports whether the audit's container name is one of the
// profile installer's (Kind/name/container).
func isInstaller(out *kube.Output, name string) bool {
	return out.Installer != nil && strings.HasPrefix(name, out.Installer.Workload+"/")
}

// kubeFailures counts the failing findings and the pods Pod Security
// restricted forbids, but for the profile installer's, which runs in a
// namespace of its own (kube.Installer.PodSecurity says why).
func kubeFailures(r audit.Report, out *kube.Output) int {
	n := len(r.Unaccepted())
	for _, c := range r.Containers {
		if ps := c.Model.PodSecurity; (ps == nil || !ps.Allowed) && !isInstaller(out, c.Name) {
			n++
		}
	}
	return n
}

// kubeWritten are the names agentbox kube writes at the top of --out.
var kubeWritten = map[string]bool{kube.ManifestFile: true, kube.SeccompFilesDir: true, kube.AppArmorFilesDir: true}

// replaceDir renames the finished directory tmp into place at dst. An
// existing dst is replaced only when it holds nothing but an earlier
// rendering.
func replaceDir(tmp, dst string) error {
	ents, err := os.ReadDir(dst)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return os.Rename(tmp, dst)
	case err != nil:
		return fmt.Errorf("--out %s: %w", dst, err)
	}
	for _, e := range ents {
		if !kubeWritten[e.Name()] {
			return WithKind(KindUsage, fmt.Errorf("--out %s holds %s, which agentbox kube did not write; choose another --out or empty it", dst, e.Name()))
		}
	}
	old := tmp + ".old"
	if err := os.Rename(dst, old); err != nil {
		return fmt.Errorf("replace %s: %w", dst, err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		_ = os.Rename(old, dst)
		return fmt.Errorf("replace %s: %w", dst, err)
	}
	return os.RemoveAll(old)
}

func (cfg KubeConfig) record(start time.Time, res KubeResult, code int, note string) error {
	rec := AuditRecord(append([]string{"agentbox", "kube"}, cfg.Args...), start, res.Report, code, note)
	rec.Agent, rec.PermissionMode = res.Output.Agent, res.Output.Permission.Mode
	for _, r := range res.Output.Residuals {
		rec.Residuals = append(rec.Residuals, ledger.Residual{Code: r.Code, Detail: r.Reason})
	}
	getenv := cfg.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	return AppendRecord(getenv, rec)
}

// WriteKubeSummary tells the user what was written, what each pod's Pod
// Security verdict is, the residuals and accepted findings with their
// reasons, and what to do before applying. On a refusal it lists the
// failing findings instead.
func WriteKubeSummary(w io.Writer, res KubeResult, refused bool) error {
	var b strings.Builder
	if refused {
		b.WriteString("the rendered manifests fail their own audit; nothing was written:\n")
		for _, f := range res.Report.Unaccepted() {
			fmt.Fprintf(&b, "  %s %s: %s\n", f.Code, f.Subject, f.Detail)
		}
	} else {
		fmt.Fprintf(&b, "wrote %s\n", filepath.Join(res.OutDir, kube.ManifestFile))
	}
	seen := map[string]bool{}
	for _, c := range res.Report.Containers {
		if ps := c.Model.PodSecurity; ps != nil && !seen[c.Name] {
			seen[c.Name] = true
			note := ""
			if isInstaller(res.Output, c.Name) && !ps.Allowed {
				note = " (accepted below: the installer's namespace is " + kube.SystemNamespace + ")"
			}
			fmt.Fprintf(&b, "pod security %s: %s%s\n", c.Name, ps, note)
		}
	}
	for _, c := range res.Report.Containers {
		for _, f := range c.Findings {
			if f.Accepted {
				fmt.Fprintf(&b, "accepted %s %s (%s): %s\n", f.Code, f.Subject, c.Name, f.AcceptedReason)
			}
		}
	}
	if in := res.Output.Installer; in != nil {
		fmt.Fprintf(&b, "accepted pod security %s: %s\n", in.Workload, in.PodSecurity)
	}
	for _, name := range sortedKeys(res.Output.Files) {
		fmt.Fprintf(&b, "wrote %s\n", filepath.Join(res.OutDir, filepath.FromSlash(name)))
	}
	for _, r := range res.Output.Residuals {
		fmt.Fprintf(&b, "residual %s: %s\n", r.Code, r.Reason)
	}
	for _, n := range res.Output.Notes {
		fmt.Fprintf(&b, "next: %s\n", n)
	}
	fmt.Fprintf(&b, "%d finding(s).\n", len(res.Report.Unaccepted()))
	_, err := io.WriteString(w, b.String())
	return err
}

// KubeSummary and KubeSynopsis are agentbox kube's help lines.
const (
	KubeSummary  = "write Kubernetes manifests: a restricted namespace, the agent pod, the gateway, network policies"
	KubeSynopsis = "[--agent codex|claude] --image IMAGE --gateway-image IMAGE --gateway-ip IP [--namespace NS] [--job | --format agent-sandbox] [--profiles runtime|files|spo] [--workspace-claim PVC | --workspace-size SIZE] [--out DIR] [flags] [-- CMD [ARG...]]"
)

// Flags registers agentbox kube's own flags with stringVar and boolVar (a
// FlagSet's StringVar and BoolVar); the policy flags come on top.
func (cfg *KubeConfig) Flags(stringVar func(p *string, name, value, usage string), boolVar func(p *bool, name string, value bool, usage string)) {
	stringVar(&cfg.Agent, "agent", "", "agent adapter: codex or claude (its command, unless one follows --)")
	stringVar(&cfg.Image, "image", "", "the agent's image, as the cluster pulls it (required)")
	stringVar(&cfg.GatewayImage, "gateway-image", "", "the gateway's image: agentbox compose --build builds it; push it where the cluster pulls (required)")
	stringVar(&cfg.GatewayIP, "gateway-ip", "", "a free ClusterIP of the service range, where the agent (which has no DNS) reaches the gateway (required)")
	stringVar(&cfg.Namespace, "namespace", "", "namespace to create and run in (default agentbox)")
	stringVar(&cfg.OutDir, "out", "", "output directory (default: ./agentbox-kube)")
	stringVar(&cfg.Profiles, "profiles", kube.ProfilesRuntime, "the agent's seccomp and AppArmor profiles: runtime (the node runtime's defaults), files (agentbox's, written beside the manifest and installed on the nodes by a DaemonSet in "+kube.SystemNamespace+") or spo (agentbox's seccomp profile as a Security Profiles Operator SeccompProfile)")
	stringVar(&cfg.InstallerImage, "installer-image", "", "--profiles files: the installer DaemonSet's image, with /bin/sh, cp, mv, sleep and apparmor_parser")
	stringVar(&cfg.Arch, "arch", kube.DefaultArch, "--profiles files|spo: the nodes' architecture (amd64 or arm64), whose seccomp profile the agent uses")
	stringVar(&cfg.WorkspaceClaim, "workspace-claim", "", "mount this existing PersistentVolumeClaim as the workspace (default: an emptyDir)")
	stringVar(&cfg.WorkspaceSize, "workspace-size", "", "render a PersistentVolumeClaim "+kube.WorkspaceClaimName+" of this size (e.g. 10Gi) as the workspace")
	stringVar(&cfg.Format, "format", kube.FormatManifests, "manifests (the agent as a Pod or Job) or agent-sandbox (a SandboxTemplate with a gateway-only managed network policy, and a Sandbox)")
	boolVar(&cfg.Job, "job", false, "render the agent as a Job (one pod, never retried) instead of a Pod")
}

// KubeMain runs the pipeline and tells the user: the summary on out, or,
// on a refusal, the failing findings on errw before the refusal's error. A
// ledger that cannot be written is a warning on errw.
func KubeMain(ctx context.Context, cfg KubeConfig, out, errw io.Writer) error {
	res, err := Kube(ctx, cfg)
	if KindOf(err) == KindRefused && res.Output != nil {
		if werr := WriteKubeSummary(errw, res, true); werr != nil {
			return werr
		}
		return err
	}
	if err != nil {
		return err
	}
	if res.LedgerErr != nil {
		fmt.Fprintf(errw, "agentbox kube: warning: ledger: %v\n", res.LedgerErr)
	}
	return WriteKubeSummary(out, res, false)
}

func sortedKeys(m map[string][]byte) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
