package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// runAudit times `agentbox audit CONTAINER` on a running Docker container
// beside `docker inspect CONTAINER`, the command a person would start the
// same diagnosis with, interleaved.
func runAudit(args []string) error {
	fs := flag.NewFlagSet("audit", flag.ContinueOnError)
	agentbox := fs.String("agentbox", "bin/agentbox", "the agentbox binary")
	container := fs.String("container", "", "name of a running Docker container (required)")
	work := fs.String("work", "", "scratch directory (required): agentbox's ledger goes there")
	n := fs.Int("n", 20, "runs of each command")
	rows := fs.String("rows", "", "append summary rows to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *container == "" || *work == "" {
		return errors.New("-container and -work are required")
	}
	docker, err := exec.LookPath("docker")
	if err != nil {
		return errors.New("docker not found; install docker.io (make setup)")
	}
	env := append(os.Environ(), "AGENTBOX_STATE_DIR="+filepath.Join(*work, "agentbox-state"))
	ab := func() (time.Duration, error) {
		return timeChecked(env, []int{0, 1}, *agentbox, "audit", "--color", "never", *container)
	}
	in := func() (time.Duration, error) { return timeChecked(env, []int{0}, docker, "inspect", *container) }
	var sa, sb sample
	for i := range *n + 1 {
		a, err := ab()
		if err != nil {
			return err
		}
		b, err := in()
		if err != nil {
			return err
		}
		if i > 0 { // the first of each warms the caches
			sa, sb = append(sa, a), append(sb, b)
		}
	}
	fmt.Printf("agentbox audit of a running container (%s, %d runs) %s; docker inspect of it %s; ratio %s\n",
		*container, len(sa), ms(sa.median()), ms(sb.median()), ratio(sa.median(), sb.median()))
	return appendRows(*rows, row{Metric: "agentbox audit CONTAINER vs docker inspect (CLI)", Agentbox: ms(sa.median()), Baseline: ms(sb.median()), Value: ratio(sa.median(), sb.median()), Met: "-"})
}

// timeChecked times a command that must end with one of the exit codes ok.
func timeChecked(env []string, ok []int, name string, args ...string) (time.Duration, error) {
	cmd := exec.Command(name, args...)
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	d := time.Since(start)
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		return 0, err
	}
	for _, c := range ok {
		if code == c {
			return d, nil
		}
	}
	return 0, fmt.Errorf("%s %v: exit %d: %s", filepath.Base(name), args, code, lastLine(stderr.String()))
}
