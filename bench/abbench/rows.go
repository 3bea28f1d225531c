package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// row is one line of the summary table. Every subcommand that measures
// something appends its rows to the rows file; `abbench summary` prints
// them all at the end.
type row struct {
	Metric   string `json:"metric"`
	Agentbox string `json:"agentbox,omitempty"`
	Baseline string `json:"baseline,omitempty"`
	// Value is the ratio agentbox/baseline, or the measured value of a
	// metric without a baseline.
	Value  string `json:"value"`
	Target string `json:"target,omitempty"`
	// Met is "yes", "no", or "-" when there is no target or no measurement.
	Met string `json:"met"`
}

// met says whether ok holds, for a row with a target.
func met(ok bool) string {
	if ok {
		return "yes"
	}
	return "no"
}

// appendRows appends rows to the JSON-lines file path.
func appendRows(path string, rows ...row) error {
	if path == "" {
		return nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("rows file: %w", err)
	}
	enc := json.NewEncoder(f)
	for _, r := range rows {
		if err := enc.Encode(r); err != nil {
			f.Close()
			return fmt.Errorf("rows file: %w", err)
		}
	}
	return f.Close()
}

// readRows reads the rows file; a missing file holds no rows.
func readRows(path string) ([]row, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []row
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		var r row
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		out = append(out, r)
	}
	return out, sc.Err()
}
