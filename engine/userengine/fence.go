package userengine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
)

// Fence is the network fence of one run: the account's uid may reach the
// gateway's loopback port and nothing else.
type Fence struct {
	// Table is the nftables table of the run's own (family inet).
	Table string `json:"table"`
	// UID is the account's uid, which every rule matches (meta skuid).
	UID uint32 `json:"uid"`
	// Port is the gateway's port on 127.0.0.1 and ::1.
	Port int `json:"port"`
}

// TableName is the fence table's name for run id: agentbox- and the id,
// with the characters nft does not take in a name replaced.
func TableName(id string) string {
	var b strings.Builder
	b.WriteString("agentbox-")
	for _, r := range id {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// Ruleset is the fence as nft -f reads it. The output chain sees every
// packet a local socket sends; one owned by the account passes only to the
// gateway's port on the loopback interface, over either family. Any other
// TCP connection is answered with a reset, which connect(2) reports at
// once as ECONNREFUSED (the listeners the self-test aims at are open, so
// that answer is the fence's) instead of retrying a dropped SYN until it
// times out; everything else is dropped, which sendto(2) reports as
// EPERM. Both are counted.
// Other users' packets are not this table's business: its policy is
// accept, and another table's rules still apply to them.
func (f Fence) Ruleset() string {
	return fmt.Sprintf(`table inet %[1]s {
	chain output {
		type filter hook output priority filter; policy accept;
		meta skuid %[2]d oifname "lo" ip daddr 127.0.0.1 tcp dport %[3]d accept
		meta skuid %[2]d oifname "lo" ip6 daddr ::1 tcp dport %[3]d accept
		meta skuid %[2]d meta l4proto tcp counter reject with tcp reset
		meta skuid %[2]d counter drop
	}
}
`, f.Table, f.UID, f.Port)
}

// nft runs the nft command with stdin.
func nft(ctx context.Context, stdin string, args ...string) (string, error) {
	path, err := exec.LookPath("nft")
	if err != nil {
		return "", fmt.Errorf("the network fence needs nft, which is not installed: apt-get install nftables: %w", err)
	}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("nft %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// Apply loads the fence, refusing a table of that name that exists.
func (f Fence) Apply(ctx context.Context) error {
	if ok, err := f.Exists(ctx); err != nil || ok {
		if err == nil {
			err = fmt.Errorf("nftables table inet %s exists already", f.Table)
		}
		return err
	}
	_, err := nft(ctx, f.Ruleset(), "-f", "-")
	return err
}

// Exists reports whether the fence's table is loaded.
func (f Fence) Exists(ctx context.Context) (bool, error) {
	out, err := nft(ctx, "", "list", "tables", "inet")
	if err != nil {
		return false, err
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.TrimSpace(line) == "table inet "+f.Table {
			return true, nil
		}
	}
	return false, nil
}

// ErrNoTable is Remove's error for a table that was not loaded.
var ErrNoTable = errors.New("no such fence table")

// Remove deletes the fence's table.
func (f Fence) Remove(ctx context.Context) error {
	ok, err := f.Exists(ctx)
	if err != nil {
		return err
	}
	if !ok {
		return ErrNoTable
	}
	_, err = nft(ctx, "", "delete", "table", "inet", f.Table)
	return err
}
