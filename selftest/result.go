package selftest

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Decision is a probe's answer: whether the boundary denied the operation.
type Decision string

// The three decisions of DESIGN.md §5. A probe passes when its Decision
// equals its Expect; Unknown never passes.
const (
	Deny    Decision = "DENY"    // the operation was refused or is impossible
	Allow   Decision = "ALLOW"   // the operation works, or the kernel would carry it out
	Unknown Decision = "UNKNOWN" // the probe could not establish either
)

// Result is one probe's verdict, written as one JSON object per line.
//
// Observed names what was seen ("EPERM", "mounted", "readable", "no-route"),
// never a raw number and never a secret's value. Detail says what was checked,
// in words; Evidence is the digest of the result's fields, Detail included, so
// that a ledger record can be checked against the line it came from.
type Result struct {
	Probe    string   `json:"probe"`
	Target   string   `json:"target"`
	Expect   Decision `json:"expect"`
	Decision Decision `json:"decision"`
	Observed string   `json:"observed"`
	RunID    string   `json:"run_id"`
	Evidence string   `json:"evidence"`
	Detail   string   `json:"detail,omitempty"`
}

// Passed reports whether the probe's decision is the one expected.
func (r Result) Passed() bool { return r.Decision == r.Expect }

// Digest returns the evidence digest of r ("sha256:" and 64 hex digits): the
// SHA-256 of probe, target, expect, decision, observed, run_id and detail,
// each followed by a NUL byte. The Evidence field itself is not hashed.
func (r Result) Digest() string {
	h := sha256.New()
	for _, s := range []string{r.Probe, r.Target, string(r.Expect), string(r.Decision), r.Observed, r.RunID, r.Detail} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// Verify reports whether r.Evidence matches the digest of its fields.
func (r Result) Verify() bool { return r.Evidence == r.Digest() }

// SHA256 returns "sha256:" and the hex digest of b. Launchers use it to give
// the probes a canary's digest instead of its value.
func SHA256(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

// digestMatches reports whether b hashes to want, a "sha256:…" string; an
// empty want never matches.
func digestMatches(b []byte, want string) bool {
	return want != "" && strings.EqualFold(SHA256(b), want)
}
