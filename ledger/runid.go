package ledger

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"
)

// runIDLayout is the time part of a run id: UTC to the millisecond, fixed
// width, so that ids sort by start time as plain strings.
const runIDLayout = "20060102T150405.000Z"

// RunIDPattern is what IsRunID accepts, for messages. A regexp of it costs
// every agentbox process about 0.3 ms and 1,700 allocations at start (its
// counted repetition compiles to 128 copies), for a check this simple.
const RunIDPattern = `^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`

// IsRunID reports whether s matches RunIDPattern: the one check of a run
// id's shape, for the ledger and the id leases alike.
func IsRunID(s string) bool {
	if len(s) < 1 || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		if !alnum && (i == 0 || c != '.' && c != '_' && c != '-') {
			return false
		}
	}
	return true
}

// NewRunID returns a fresh run id such as "20251129T074412.123Z-4f2a9c1b":
// the current UTC time to the millisecond and 32 random bits. Ids sort by
// time; two runs in the same millisecond differ in the suffix. Ids are also
// safe as file names (userns names its lease files after them).
func NewRunID() string { return newRunID(time.Now()) }

func newRunID(t time.Time) string {
	var b [4]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (it crashes the program instead)
	return t.UTC().Format(runIDLayout) + "-" + hex.EncodeToString(b[:])
}

// ValidRunID reports whether id can name a record: 1 to 128 characters of
// letters, digits, '.', '_' and '-', not starting with a punctuation mark.
// Ids made by NewRunID always are.
func ValidRunID(id string) error {
	if !IsRunID(id) {
		return fmt.Errorf("run id %q must match %s", id, RunIDPattern)
	}
	return nil
}
