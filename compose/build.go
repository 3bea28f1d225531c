package compose

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
)

// ErrNoEngineCLI is returned by BuildGateway when neither docker nor podman
// is on the PATH.
var ErrNoEngineCLI = errors.New("neither docker nor podman is on the PATH")

// BuildGateway builds the gateway image image from the build context that
// Write put under dir, with the docker CLI (or podman's). The context holds
// only the Dockerfile, the static binary and the CA bundle; FROM scratch
// pulls nothing. The CLI's output goes to w.
func BuildGateway(ctx context.Context, dir, image string, w io.Writer) error {
	cli := ""
	for _, name := range []string{"docker", "podman"} {
		if p, err := exec.LookPath(name); err == nil {
			cli = p
			break
		}
	}
	if cli == "" {
		return fmt.Errorf("build the gateway image: %w (install docker.io, or build %s yourself with: docker build -t %s %s)",
			ErrNoEngineCLI, image, image, filepath.Join(dir, BuildDir))
	}
	cmd := exec.CommandContext(ctx, cli, "build", "--tag", image, filepath.Join(dir, BuildDir))
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s build --tag %s %s: %w", filepath.Base(cli), image, filepath.Join(dir, BuildDir), err)
	}
	return nil
}
