package manifest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"

	. "github.com/agentbox/agentbox/audit"
)

// ComposeOptions says how to load a compose project, as `docker compose`
// would with the same flags.
type ComposeOptions struct {
	// Env is the environment used for interpolation and pass-through
	// variables (KEY=VALUE); nil means no variables at all, not os.Environ.
	Env []string
	// Profiles narrow the project to what `docker compose --profile NAME
	// up` would run: the services without profiles and those of a named
	// profile ("*" for all). None means every service, whatever its
	// profiles: a service the auditor did not enable still runs for whoever
	// does. COMPOSE_PROFILES is not read.
	Profiles []string
	// WorkingDir is the project directory; empty means the first file's.
	WorkingDir string
	// ProjectName overrides the project name.
	ProjectName string
}

// LoadCompose loads a compose project from files (merged in order, like
// `docker compose -f a -f b`) with compose-go, so interpolation, env_file,
// extends, include, merges, profiles and anchors behave as in docker
// compose, and returns one model per enabled service, sorted by name. Every
// finding location points at the file and line that set the value. A file
// compose rejects is an *InputError with file and line.
func LoadCompose(ctx context.Context, files []string, co ComposeOptions) (cs []Container, err error) {
	if len(files) == 0 {
		return nil, errors.New("no compose file given")
	}
	defer func() {
		if r := recover(); r != nil {
			cs, err = nil, &InputError{File: files[0], Err: fmt.Errorf("compose loader failed on this input: %v", r)}
		}
	}()
	files, err = absAll(files)
	if err != nil {
		return nil, err
	}
	// compose-go's own YAML errors name the line of the problem more
	// precisely than yaml.v3's, so they are preferred when both fail.
	loc, yamlErr := newLocator(files)
	project, err := loadProject(ctx, files, co)
	switch {
	case err != nil:
		return nil, composeError(err, files, loc)
	case yamlErr != nil:
		return nil, yamlErr
	}
	names := make([]string, 0, len(project.Services))
	for n := range project.Services {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		c := fromService(project, project.Services[n], loc)
		c.Resolve()
		c.AgentConfigs = ScanAgentConfigs(c.Mounts)
		cs = append(cs, c)
	}
	return cs, nil
}

func absAll(files []string) ([]string, error) {
	out := make([]string, len(files))
	for i, f := range files {
		a, err := filepath.Abs(f)
		if err != nil {
			return nil, fmt.Errorf("compose file %s: %w", f, err)
		}
		out[i] = a
	}
	return out, nil
}

func loadProject(ctx context.Context, files []string, co ComposeOptions) (*types.Project, error) {
	wd := co.WorkingDir
	if wd == "" {
		wd = filepath.Dir(files[0])
	}
	opts := []cli.ProjectOptionsFn{
		cli.WithWorkingDirectory(wd),
		cli.WithEnv(co.Env),
		cli.WithDotEnv,
		cli.WithProfiles(profilesToLoad(co.Profiles)),
	}
	if co.ProjectName != "" {
		opts = append(opts, cli.WithName(co.ProjectName))
	} else {
		opts = append(opts, cli.WithName(projectName(wd)))
	}
	po, err := cli.NewProjectOptions(files, opts...)
	if err != nil {
		return nil, err
	}
	return po.LoadProject(ctx)
}

// allProfiles enables every service in compose-go, whatever its profiles.
const allProfiles = "*"

// profilesToLoad is the profiles to enable: the ones named, or all of them.
func profilesToLoad(named []string) []string {
	if len(named) == 0 {
		return []string{allProfiles}
	}
	return named
}

var unsafeName = regexp.MustCompile(`[^a-z0-9_-]+`)

// projectName derives docker compose's default project name from a dir.
func projectName(dir string) string {
	n := unsafeName.ReplaceAllString(strings.ToLower(filepath.Base(dir)), "")
	n = strings.TrimLeft(n, "_-")
	if n == "" {
		return "default"
	}
	return n
}

var (
	fileInErr = regexp.MustCompile(`(?:parse|validating|reading|loading) (/[^\s:]+)`)
	pathInErr = regexp.MustCompile(`\b(services(?:\.[A-Za-z0-9_.-]+)+|networks\.[A-Za-z0-9_.-]+|volumes\.[A-Za-z0-9_.-]+)`)
)

// composeError turns a compose-go error into an *InputError naming the
// file and line: the line from a YAML error, or the line of the compose path
// the error names.
func composeError(err error, files []string, loc *locator) error {
	msg := err.Error()
	ie := &InputError{File: files[0], Err: fmt.Errorf("compose rejected the project: %w", err)}
	if m := fileInErr.FindStringSubmatch(msg); m != nil {
		ie.File = m[1]
	}
	if n := yamlErrorLine(msg); n > 0 && strings.Contains(msg, "yaml:") {
		ie.Line = n
		return ie
	}
	if m := pathInErr.FindStringSubmatch(msg); m != nil {
		if l := loc.path(strings.TrimRight(m[1], ".")); l.Line > 0 {
			ie.File, ie.Line = l.File, l.Line
		}
	}
	return ie
}

// readEnvFileLine returns the line of NAME in an env file (0 when it is
// not there) and the entry as written there.
func readEnvFileLine(path, name string) (int, envEntry) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, envEntry{}
	}
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimPrefix(strings.TrimSpace(line), "export ")
		if k, v, eq := strings.Cut(line, "="); strings.TrimSpace(k) == name {
			return i + 1, envEntry{value: v, bare: !eq}
		}
	}
	return 0, envEntry{}
}
