package doctor

import (
	"bufio"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/agentbox/agentbox/account"
)

// On macOS agentbox runs the agent as the account _agentbox under a
// Seatbelt profile behind a pf anchor (docs/dedicated-user.md). Doctor
// checks what that needs of the host and setup-user made: pf enabled, a
// main ruleset that still evaluates the com.apple anchors (the fence's
// anchor com.apple/agentbox is evaluated only through them), and the
// account hidden and locked. The commands run on a Mac only (Host.Darwin);
// the parsers and checks are pure and tested on Linux against text in
// pfctl's and dscl's formats (testdata/darwin, written from those
// formats, not captured on a Mac).

// The commands doctor runs on a Mac.
var (
	pfInfoArgv    = []string{"/sbin/pfctl", "-s", "info"}
	pfRulesArgv   = []string{"/sbin/pfctl", "-s", "rules"}
	pfAnchorsArgv = []string{"/sbin/pfctl", "-s", "Anchors"}
	dsclReadArgv  = []string{"/usr/bin/dscl", ".", "-read", "/Users/" + account.DarwinName}
	idGroupsArgv  = []string{"/usr/bin/id", "-Gn", account.DarwinName}
)

// DarwinFacts are the outputs doctor judges on a Mac, each with the error
// of its command ("" when it ran).
type DarwinFacts struct {
	PFInfo     string `json:"pf_info"`
	PFInfoErr  string `json:"pf_info_err,omitempty"`
	PFRules    string `json:"pf_rules"`
	PFRulesErr string `json:"pf_rules_err,omitempty"`
	// PFAnchors is pfctl -s Anchors: the main ruleset's anchors.
	PFAnchors    string `json:"pf_anchors"`
	PFAnchorsErr string `json:"pf_anchors_err,omitempty"`
	// Account is dscl's record of the account, Groups id -Gn's names.
	Account    string `json:"account"`
	AccountErr string `json:"account_err,omitempty"`
	Groups     string `json:"groups"`
	GroupsErr  string `json:"groups_err,omitempty"`
}

func gatherDarwin(ctx context.Context, h Host, f *Facts) {
	if !h.Darwin {
		return
	}
	d := &DarwinFacts{}
	run := func(argv []string, out, errs *string) {
		b, err := h.Sys.Output(ctx, argv[0], argv[1:]...)
		*out = string(b)
		if err != nil {
			*errs = err.Error()
		}
	}
	run(pfInfoArgv, &d.PFInfo, &d.PFInfoErr)
	run(pfRulesArgv, &d.PFRules, &d.PFRulesErr)
	run(pfAnchorsArgv, &d.PFAnchors, &d.PFAnchorsErr)
	run(dsclReadArgv, &d.Account, &d.AccountErr)
	run(idGroupsArgv, &d.Groups, &d.GroupsErr)
	f.Darwin = d
}

// parsePFStatus reads pfctl -s info's "Status: Enabled …" line.
func parsePFStatus(info string) (enabled, found bool) {
	sc := bufio.NewScanner(strings.NewReader(info))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "Status:" {
			return f[1] == "Enabled", f[1] == "Enabled" || f[1] == "Disabled"
		}
	}
	return false, false
}

// pfMain is what the fence needs of pf's main filter ruleset.
type pfMain struct {
	// Rules counts the filter rules listed.
	Rules int
	// Anchor is the first anchor "com.apple/*" rule, "" when there is
	// none; Line is its line in the listing, from 1.
	Anchor string
	Line   int
	// PassQuick are the pass ... quick rules above it: they decide a
	// packet they match before the anchor is evaluated.
	PassQuick []string
}

// appleAnchor is the anchor rule of the stock /etc/pf.conf, as pfctl
// lists it.
const appleAnchor = `anchor "com.apple/*"`

// parsePFRules reads pfctl -s rules: one rule a line, as pfctl prints
// them (pfctl_parser.c's print_rule).
func parsePFRules(rules string) pfMain {
	var m pfMain
	sc := bufio.NewScanner(strings.NewReader(rules))
	for sc.Scan() {
		line := strings.Join(strings.Fields(sc.Text()), " ")
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		m.Rules++
		f := strings.Fields(line)
		switch {
		case m.Anchor != "":
		case f[0] == "anchor" && len(f) > 1 && f[1] == `"com.apple/*"`:
			m.Anchor, m.Line = line, m.Rules
		case f[0] == "pass" && slices.Contains(f, "quick"):
			m.PassQuick = append(m.PassQuick, line)
		}
	}
	return m
}

// parsePFAnchors reads pfctl -s Anchors: one anchor path a line.
func parsePFAnchors(out string) []string {
	var as []string
	for _, l := range strings.Split(out, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			as = append(as, l)
		}
	}
	return as
}

// pfFix is how a Mac gets the stock anchor rule back.
const pfFix = `restore the stock lines of /etc/pf.conf (scrub-anchor, nat-anchor, rdr-anchor, dummynet-anchor and anchor "com.apple/*", then load anchor "com.apple" from "/etc/pf.anchors/com.apple"), then: sudo pfctl -f /etc/pf.conf`

// pfUnknown is the result of a pfctl that did not answer.
func pfUnknown(id string, f *Facts, what, err string) Result {
	fix := "run /sbin/pfctl -s info as root to see why it fails"
	if f.User.Rootless() {
		fix = "pfctl needs root: sudo agentbox doctor"
	}
	return Result{ID: id, Status: Unknown, Layer: LayerDarwinUser, Detail: what + " failed: " + err, Fix: fix}
}

func checkDarwinPF(f *Facts) []Result {
	d := f.Darwin
	if d == nil {
		return nil
	}
	const id = "darwin-pf"
	if d.PFInfoErr != "" {
		return []Result{pfUnknown(id, f, "pfctl -s info", d.PFInfoErr)}
	}
	enabled, found := parsePFStatus(d.PFInfo)
	switch {
	case !found:
		return []Result{{ID: id, Status: Unknown, Layer: LayerDarwinUser, Detail: "pfctl -s info printed no Status: line", Fix: "run sudo /sbin/pfctl -s info and report its output"}}
	case !enabled:
		return []Result{{
			ID: id, Status: Warn, Layer: LayerDarwinUser,
			Detail: "pf is disabled: agentbox run enables it for each run (pfctl -E, whose reference it gives back at teardown), and the fence holds only while it stays on; a pfctl -d by anything else during a run turns the fence off",
			Fix:    "sudo pfctl -E (keeps pf on until the next boot)",
		}}
	}
	return []Result{{ID: id, Status: Pass, Layer: LayerDarwinUser, Detail: "pf is enabled"}}
}

func checkDarwinPFAnchors(f *Facts) []Result {
	d := f.Darwin
	if d == nil {
		return nil
	}
	const id = "darwin-pf-anchors"
	if d.PFRulesErr != "" {
		return []Result{pfUnknown(id, f, "pfctl -s rules", d.PFRulesErr)}
	}
	m := parsePFRules(d.PFRules)
	fail := func(detail, fix string) []Result {
		return []Result{{ID: id, Status: Fail, Layer: LayerDarwinUser, Detail: detail, Fix: fix}}
	}
	switch {
	case m.Rules == 0:
		return fail("pfctl -s rules lists no filter rule: no main ruleset is loaded, so the anchor "+account.PFAnchor+" would never be evaluated", "sudo pfctl -f /etc/pf.conf (and "+pfFix+" if it lacks them)")
	case m.Anchor == "":
		return fail("the main ruleset has no "+appleAnchor+" rule: the fence's anchor "+account.PFAnchor+" would load and never be evaluated", pfFix)
	case m.Anchor != appleAnchor+" all":
		return fail(fmt.Sprintf("the main ruleset evaluates the com.apple anchors only for some packets (%q, rule %d): the fence needs them for all", m.Anchor, m.Line), pfFix)
	case len(m.PassQuick) > 0:
		return fail(fmt.Sprintf("%d pass quick rule(s) come before %s (first: %q): a packet of the account they match passes before the fence is evaluated", len(m.PassQuick), appleAnchor, m.PassQuick[0]),
			"move the "+appleAnchor+" line of /etc/pf.conf above those rules (or drop their quick), then: sudo pfctl -f /etc/pf.conf")
	}
	detail := fmt.Sprintf("the main ruleset evaluates %s for every packet (rule %d of %d), before any pass quick rule", appleAnchor, m.Line, m.Rules)
	if d.PFAnchorsErr == "" {
		if !slices.Contains(parsePFAnchors(d.PFAnchors), "com.apple") {
			return fail("pfctl -s rules has the "+appleAnchor+" rule, but pfctl -s Anchors lists no com.apple anchor", pfFix)
		}
		detail += "; pfctl -s Anchors lists com.apple"
	}
	return []Result{{ID: id, Status: Pass, Layer: LayerDarwinUser, Detail: detail}}
}

// darwinForbiddenGroups are the groups that give the account more than
// its own files: administration, the system's group, every local user's,
// and the packet filter devices' (Wireshark's ChmodBPF).
var darwinForbiddenGroups = []string{"admin", "wheel", "staff", "access_bpf"}

func checkDarwinAccount(f *Facts) []Result {
	d := f.Darwin
	if d == nil {
		return nil
	}
	const id = "darwin-account"
	name := account.DarwinName
	if d.AccountErr != "" {
		return []Result{{ID: id, Status: Fail, Layer: LayerDarwinUser, Detail: "the account " + name + " cannot be read from Directory Services: " + d.AccountErr, Fix: "sudo agentbox setup-user"}}
	}
	a := account.ParseDSCLAttrs(d.Account)
	dscl := "sudo /usr/bin/dscl . -create /Users/" + name
	var faults, fixes []string
	fault := func(what, fix string) { faults, fixes = append(faults, what), append(fixes, fix) }
	uid, uerr := strconv.Atoi(a["UniqueID"])
	gid, gerr := strconv.Atoi(a["PrimaryGroupID"])
	if uerr != nil || gerr != nil || uid <= 0 || gid <= 0 {
		fault(fmt.Sprintf("UniqueID %q and PrimaryGroupID %q are not an account of its own", a["UniqueID"], a["PrimaryGroupID"]), "sudo agentbox setup-user --remove && sudo agentbox setup-user")
	}
	if a["IsHidden"] != "1" {
		fault(fmt.Sprintf("IsHidden is %q, not 1: the login window lists it", a["IsHidden"]), dscl+" IsHidden 1")
	}
	if sh := a["UserShell"]; sh != account.DarwinShell && sh != "/sbin/nologin" {
		fault(fmt.Sprintf("UserShell is %q: a login shell", sh), dscl+" UserShell "+account.DarwinShell)
	}
	if a["Password"] != "*" {
		fault(fmt.Sprintf("Password is %q, not *: the account may have a password", a["Password"]), dscl+" Password '*'")
	}
	if aa, ok := a["AuthenticationAuthority"]; ok {
		fault(fmt.Sprintf("it has an AuthenticationAuthority (%s): a password or another way to log in may be set", aa), "sudo /usr/bin/dscl . -delete /Users/"+name+" AuthenticationAuthority")
	}
	if d.GroupsErr != "" {
		fault("id -Gn "+name+" failed: "+d.GroupsErr, "run /usr/bin/id -Gn "+name+" as root to see why")
	}
	for _, g := range strings.Fields(d.Groups) {
		if slices.Contains(darwinForbiddenGroups, g) {
			fault("it is in the group "+g, "sudo /usr/sbin/dseditgroup -o edit -d "+name+" -t user "+g+" (if id -Gn still lists it, the membership is nested: dsmemberutil checkmembership -U "+name+" -G "+g+")")
		}
	}
	if len(faults) > 0 {
		return []Result{{ID: id, Status: Fail, Layer: LayerDarwinUser, Detail: "the account " + name + " is not as setup-user makes it: " + strings.Join(faults, "; "), Fix: strings.Join(fixes, "; ")}}
	}
	return []Result{{ID: id, Status: Pass, Layer: LayerDarwinUser, Detail: fmt.Sprintf("the account %s (uid %d, gid %d) is hidden, has no password and no login shell, and is in none of %s", name, uid, gid, strings.Join(darwinForbiddenGroups, ", "))}}
}
