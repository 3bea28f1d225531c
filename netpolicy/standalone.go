package netpolicy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
)

// WriteRoutes tells the operator of a standalone gateway (agentbox
// gateway) what it will do, without secrets: each model route with where
// its key comes from, then what the proxy allows. Each line starts with
// prefix.
func (g *Gateway) WriteRoutes(w io.Writer, prefix string, allow []string) {
	for _, r := range g.Routes() {
		key := "no key"
		switch {
		case r.HasKey:
			key = "key from " + r.KeySource
		case r.KeySource != "":
			key = "no key (" + strings.TrimPrefix(r.KeySource, "env:") + " is unset)"
		}
		fmt.Fprintf(w, "%sroute /%s/ -> %s (%s)\n", prefix, r.Name, r.URL, key)
	}
	if len(allow) == 0 {
		fmt.Fprintf(w, "%sproxy: network.allow is empty, every destination is refused\n", prefix)
	} else {
		fmt.Fprintf(w, "%sproxy: allows %s\n", prefix, strings.Join(allow, ", "))
	}
}

// ServeUntil serves g on the listener that spec names (see Listen) until
// ctx ends or serving fails, then closes g. It says on log, after prefix,
// where it listens and, at the end, its counts. A listener that cannot be
// made, a failure to serve and a decision log that cannot be closed are
// errors.
func (g *Gateway) ServeUntil(ctx context.Context, spec string, log io.Writer, prefix string) error {
	l, err := Listen(spec)
	if err != nil {
		return errors.Join(err, g.closeLog())
	}
	fmt.Fprintf(log, "%slistening on %s\n", prefix, spec)
	served := make(chan error, 1)
	go func() { served <- g.Serve(l) }()
	select {
	case <-ctx.Done():
	case err = <-served:
	}
	err = errors.Join(err, g.closeLog())
	s := g.Stats()
	fmt.Fprintf(log, "%sstopped: %d allowed, %d denied\n", prefix, s.Allowed, s.Denied)
	return err
}

// closeLog closes g; only its decision log can fail to close.
func (g *Gateway) closeLog() error {
	if err := g.Close(); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("decision log: %w", err)
	}
	return nil
}
