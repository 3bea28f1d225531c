//go:build linux

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/agentbox/agentbox/selftest"
	"golang.org/x/term"
)

// probeMain runs the probes names selects ("all": those of the config) with
// the configuration read from in, and prints the results. It exits 0 when
// every probe passed, 1 when one did not, 2 on bad input.
func probeMain(in io.Reader, out, errw io.Writer, names string, asJSON bool) int {
	cfg, err := readConfig(in)
	if err != nil {
		fmt.Fprintf(errw, "agentbox-init: %v\n", err)
		return 2
	}
	if names != "all" {
		cfg.Probes = strings.Split(names, ",")
	}
	if err := cfg.Validate(); err != nil {
		fmt.Fprintf(errw, "agentbox-init: config: %v (agentbox-init --list names the probes)\n", err)
		return 2
	}
	return printProbes(cfg, out, errw, asJSON)
}

// printProbes runs the probes cfg selects and prints their results: exit 0
// when every probe passed, 1 when one did not.
func printProbes(cfg selftest.InitConfig, out, errw io.Writer, asJSON bool) int {
	return printResults(selftest.NewEnv(&cfg), out, errw, asJSON)
}

// printResults is printProbes in the Env e.
func printResults(e *selftest.Env, out, errw io.Writer, asJSON bool) int {
	bw := bufio.NewWriter(out)
	defer bw.Flush()
	failed := false
	print, flush := printTable(bw)
	// JSON lines leave whenever the next result is not known yet: those
	// known together in one write (selftest.RunBatched).
	var idle func() error
	if asJSON {
		print, flush, idle = printJSON(bw), bw.Flush, bw.Flush
	}
	defer func() { _ = flush() }()
	err := selftest.RunBatched(context.Background(), e, func(r selftest.Result) error {
		failed = failed || !r.Passed()
		return print(r)
	}, idle)
	if err != nil {
		fmt.Fprintf(errw, "agentbox-init: %v\n", err)
		return 1
	}
	if failed {
		return 1
	}
	return 0
}

// printJSON writes each result as a JSON line, as a json.Encoder would
// (selftest.AppendResult: without reflection for the usual results).
func printJSON(w *bufio.Writer) func(selftest.Result) error {
	var line []byte
	return func(r selftest.Result) error {
		var err error
		if line, err = selftest.AppendResult(line[:0], r); err != nil {
			return err
		}
		_, err = w.Write(append(line, '\n'))
		return err
	}
}

// printTable writes aligned rows; the table appears when flush is called.
func printTable(w io.Writer) (print func(selftest.Result) error, flush func() error) {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "PROBE\tEXPECT\tDECISION\tOBSERVED")
	return func(r selftest.Result) error {
		mark := ""
		if !r.Passed() {
			mark = "\t<- FAIL"
		}
		_, err := fmt.Fprintf(tw, "%s\t%s\t%s\t%s%s\n", r.Probe, r.Expect, r.Decision, r.Observed, mark)
		return err
	}, tw.Flush
}

// readConfig decodes an InitConfig from in unless in is a terminal; empty
// input is the zero configuration of the current protocol version.
func readConfig(in io.Reader) (selftest.InitConfig, error) {
	cfg := selftest.InitConfig{Version: selftest.ProtocolVersion}
	if f, ok := in.(*os.File); ok {
		if term.IsTerminal(int(f.Fd())) {
			return cfg, nil
		}
	}
	dec := json.NewDecoder(in)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil && !errors.Is(err, io.EOF) {
		return cfg, fmt.Errorf("config on stdin: %w", err)
	}
	return cfg, nil
}

func listProbes(w io.Writer) int {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "PROBE\tGROUP\tEXPECT\tSUMMARY")
	for _, p := range selftest.Catalog() {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", p.Name, p.Group, p.Expect, p.Summary)
	}
	tw.Flush()
	return 0
}
