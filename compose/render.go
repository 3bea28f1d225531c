package compose

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/compose-spec/compose-go/v2/types"

	"github.com/agentbox/agentbox/agents"
	"github.com/agentbox/agentbox/apparmor"
	"github.com/agentbox/agentbox/netpolicy"
	"github.com/agentbox/agentbox/policy"
	"github.com/agentbox/agentbox/seccomp/profiles"
)

// File is one file of a rendered project.
type File struct {
	// Name is the path relative to the output directory, with slashes.
	Name string
	Data []byte
	Mode fs.FileMode
	// Secret marks a key file: created empty when absent, owned by UID and
	// GID, and otherwise never read, compared or replaced.
	Secret   bool
	UID, GID uint32
}

// Output is a rendered project: the compose model and every file to write.
type Output struct {
	Project *types.Project
	Files   []File
	// GatewayImage is the reference of the gateway image the project builds.
	GatewayImage string
	// Agent is the adapter that prepared the command (agents.Detect), and
	// Permission the permission mode the command selects.
	Agent      string
	Permission agents.Permission
	// Residuals are the plan's residuals: layers this host cannot provide.
	Residuals []policy.Residual
	// Notes are what the user must do before `up`.
	Notes []string
}

// File returns the file called name, or nil.
func (o *Output) File(name string) *File {
	for i := range o.Files {
		if o.Files[i].Name == name {
			return &o.Files[i]
		}
	}
	return nil
}

// Render translates plan into a compose project written to opts.OutDir.
// It reads nothing and writes nothing; bad input is an *InputError.
func Render(plan *policy.Plan, opts Options) (*Output, error) {
	if opts.Arch == "" {
		arch, err := profiles.NativeArch()
		if err != nil {
			return nil, err
		}
		opts.Arch = arch
	}
	if err := validate(plan, opts); err != nil {
		return nil, err
	}
	r := &renderer{plan: plan, o: opts, out: &Output{Residuals: plan.Residuals}}
	steps := []struct {
		name string
		run  func() error
	}{
		{"agent", r.agent},
		{"seccomp", r.seccomp},
		{"apparmor", r.apparmor},
		{"gateway", r.gateway},
		{"project", func() error { return r.project(filepath.Join(opts.seccompDir(), SeccompFile)) }},
	}
	for _, s := range steps {
		if err := s.run(); err != nil {
			return nil, fmt.Errorf("render %s: %w", s.name, err)
		}
	}
	r.notes()
	return r.out, nil
}

type renderer struct {
	plan   *policy.Plan
	o      Options
	out    *Output
	launch agents.Launch
}

// agent adapts the command to the gateway (agents.Prepare), with the key
// variables compose carries (composeKeys).
func (r *renderer) agent() error {
	l, err := agents.Prepare(r.o.Command, nil, agents.Gateway{URL: gatewayURL(), Token: r.o.Token})
	if err != nil {
		return &InputError{Field: "command", Msg: err.Error()}
	}
	if err := composeKeys(&l, r.o.Token); err != nil {
		return err
	}
	r.launch = l
	r.out.Agent, r.out.Permission = l.Agent, l.Permission
	return nil
}

func (r *renderer) add(name string, data []byte, mode fs.FileMode) {
	r.out.Files = append(r.out.Files, File{Name: name, Data: data, Mode: mode})
}

func validate(plan *policy.Plan, o Options) error {
	switch {
	case plan == nil:
		return &InputError{Msg: "no plan to render"}
	case plan.Rootfs.Image != "":
		return &InputError{Field: "rootfs", Msg: "an unpacked root does not apply to a compose project", Fix: "name the agent's image with --image and drop rootfs"}
	case strings.TrimSpace(o.Image) == "":
		return &InputError{Field: "--image", Msg: "no agent image given", Fix: "pass --image IMAGE, an image with the agent installed"}
	case len(o.Command) == 0:
		return &InputError{Field: "command", Msg: "no agent and no command", Fix: "pass --agent " + strings.Join(AgentNames(), "|") + ", or a command after --"}
	case !strings.HasPrefix(o.Token, netpolicy.TokenPrefix):
		return &InputError{Field: "token", Msg: "the gateway key is not a gateway token", Fix: "use netpolicy.NewToken"}
	case !filepath.IsAbs(o.OutDir):
		return &InputError{Field: "--out", Msg: fmt.Sprintf("%q is not an absolute path", o.OutDir)}
	case len(o.CABundle) == 0:
		return &InputError{Field: "ca bundle", Msg: "no CA certificates for the gateway", Fix: "install ca-certificates"}
	}
	if within(plan.Workspace, o.OutDir) {
		return &InputError{
			Field: "--out", Msg: fmt.Sprintf("%s holds the workspace %s, so the agent would see and edit the project it runs from", o.OutDir, plan.Workspace),
			Fix: "write the project to a directory inside the workspace or outside it, for example --out " + filepath.Join(plan.Workspace, "agentbox-compose"),
		}
	}
	return staticBinary(o.GatewayBinary, o.Arch)
}

// within reports whether p is dir or below it.
func within(p, dir string) bool {
	p, dir = filepath.Clean(p), filepath.Clean(dir)
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}

func (r *renderer) seccomp() error {
	p, ok := profiles.Named(r.plan.Seccomp)
	if !ok {
		return fmt.Errorf("the plan names seccomp profile %q, which agentbox does not have", r.plan.Seccomp)
	}
	b, err := p.JSON(r.o.Arch)
	if err != nil {
		return err
	}
	r.add(SeccompFile, b, 0o644)
	return nil
}

// apparmor writes agentbox's profile where the plan chose AppArmor.
func (r *renderer) apparmor() error {
	if r.plan.LSM.Kind != policy.LSMAppArmor {
		return nil
	}
	text, err := apparmor.Render(r.plan.LSM.AppArmorProfile)
	if err != nil {
		return err
	}
	r.add(AppArmorFile, []byte(text), 0o644)
	return nil
}

func (r *renderer) project(seccompPath string) error {
	p := &types.Project{
		Services: types.Services{AgentService: r.agentService(seccompPath), GatewayService: r.gatewayService(seccompPath)},
		Networks: types.Networks{
			SandboxNetwork: {Internal: true},
			EgressNetwork:  {},
		},
	}
	uid, gid := r.o.gatewayIDs()
	for _, route := range r.keyedRoutes() {
		s := secretName(route)
		if p.Secrets == nil {
			p.Secrets = types.Secrets{}
		}
		p.Secrets[s] = types.SecretConfig{File: "./" + SecretsDir + "/" + s}
		r.out.Files = append(r.out.Files, File{Name: SecretsDir + "/" + s, Mode: 0o600, Secret: true, UID: uid, GID: gid})
	}
	b, err := Marshal(p)
	if err != nil {
		return err
	}
	r.out.Project = p
	r.add(ComposeFile, b, 0o600)
	r.add(IgnoreFile, []byte("# written by agentbox compose: key files and the gateway's binary stay out of version control\n"+SecretsDir+"/\n"+BuildDir+"/agentbox\n"), 0o644)
	return nil
}

func (r *renderer) notes() {
	uid, _ := r.o.gatewayIDs()
	for _, route := range r.keyedRoutes() {
		r.out.Notes = append(r.out.Notes, fmt.Sprintf("put the real %s key into %s (created empty, mode 0600, owned by the gateway's uid %d); the gateway does not start while it is empty",
			route, filepath.Join(r.o.OutDir, SecretsDir, secretName(route)), uid))
	}
	if len(r.keyedRoutes()) == 0 {
		r.out.Notes = append(r.out.Notes, fmt.Sprintf("%s gets no key file: its model requests reach the gateway's routes without a key; name the routes it uses in %s (gateway: {upstreams: {openai: {}}}) and render again to get their key files",
			filepath.Base(r.o.Command[0]), policy.FileName))
	}
	if r.plan.LSM.Kind == policy.LSMAppArmor {
		r.out.Notes = append(r.out.Notes, fmt.Sprintf("load the AppArmor profile before up: apparmor_parser -r -K %s", filepath.Join(r.o.OutDir, AppArmorFile)))
	}
	if id := r.plan.Identity; id.GrantWorkspace {
		r.out.Notes = append(r.out.Notes, fmt.Sprintf("the workspace is owned by root and the agent runs as uid %d: let it write with chown -R %d:%d %s (or setfacl -R -m u:%d:rwX %s)",
			id.UID, id.UID, id.GID, r.plan.Workspace, id.UID, r.plan.Workspace))
	}
}
