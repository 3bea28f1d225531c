package account

import (
	"bufio"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// The macOS account: hidden, a uid in DarwinIDRange, no password, no shell,
// not in staff. The range avoids Apple's role accounts (200-400, and the
// 300s that macOS 15 took from Nix's _nixbld users) and stays below 500,
// where login windows list accounts.
const (
	DarwinName  = "_agentbox"
	DarwinHome  = "/Users/Shared/agentbox/home"
	DarwinShell = "/usr/bin/false"
	DarwinIDMin = 450
	DarwinIDMax = 499
)

// ErrNoFreeID is returned by ChooseDarwinID when every id of the range is
// taken.
var ErrNoFreeID = errors.New("no free id")

// ChooseDarwinID returns the first id of DarwinIDMin..DarwinIDMax used by
// no user (UniqueID) and no group (PrimaryGroupID), so the account and its
// group share one number.
func ChooseDarwinID(uids, gids []int) (int, error) {
	used := map[int]bool{}
	for _, id := range append(append([]int(nil), uids...), gids...) {
		used[id] = true
	}
	for id := DarwinIDMin; id <= DarwinIDMax; id++ {
		if !used[id] {
			return id, nil
		}
	}
	return 0, fmt.Errorf("%w in %d-%d across users and groups: remove an unused account, or report which daemons took the range", ErrNoFreeID, DarwinIDMin, DarwinIDMax)
}

// ParseDSCLList reads the output of `dscl . -list /Users UniqueID` (or
// /Groups PrimaryGroupID): a name and a number per line.
func ParseDSCLList(out string) ([]int, error) {
	var ids []int
	sc := bufio.NewScanner(strings.NewReader(out))
	for n := 1; sc.Scan(); n++ {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) != 2 {
			return nil, fmt.Errorf("dscl list line %d: %q: want NAME ID", n, sc.Text())
		}
		id, err := strconv.Atoi(f[1])
		if err != nil {
			return nil, fmt.Errorf("dscl list line %d: id %q: %w", n, f[1], err)
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// DarwinSetup is the plan that creates the macOS account with id for both
// its uid and its group's gid.
func DarwinSetup(id int) Plan {
	u, g, ids := "/Users/"+DarwinName, "/Groups/"+DarwinName, strconv.Itoa(id)
	dscl := func(why string, args ...string) Command {
		return Command{append([]string{"/usr/bin/dscl", "."}, args...), why}
	}
	return Plan{OS: "darwin", Commands: []Command{
		dscl("the account's own group", "-create", g),
		dscl("its gid, the same number as the uid", "-create", g, "PrimaryGroupID", ids),
		dscl("no group password", "-create", g, "Password", "*"),
		dscl("the account", "-create", u),
		dscl("its uid, free across users and groups", "-create", u, "UniqueID", ids),
		dscl("its primary group", "-create", u, "PrimaryGroupID", ids),
		dscl("no login shell", "-create", u, "UserShell", DarwinShell),
		dscl("its home, outside every user's", "-create", u, "NFSHomeDirectory", DarwinHome),
		dscl("a name for people", "-create", u, "RealName", "agentbox sandbox"),
		dscl("hidden from the login window", "-create", u, "IsHidden", "1"),
		dscl("no password: nobody logs in as it", "-create", u, "Password", "*"),
		{[]string{"/usr/sbin/dseditgroup", "-o", "edit", "-d", DarwinName, "-t", "user", "staff"}, "not in staff, which can list users' homes"},
		{[]string{"/bin/mkdir", "-p", DarwinHome}, "the home directory"},
		{[]string{"/usr/sbin/chown", ids + ":" + ids, DarwinHome}, "owned by the account"},
		{[]string{"/bin/chmod", "0700", DarwinHome}, "readable by the account alone"},
	}, Notes: []string{
		"no sudoers entry: the macOS side of 'agentbox run --isolation user' is not built yet, and the entry comes with it",
	}}
}

// DarwinRemove is the plan that undoes DarwinSetup.
func DarwinRemove() Plan {
	return Plan{OS: "darwin", Commands: []Command{
		{[]string{"/usr/bin/dscl", ".", "-delete", "/Users/" + DarwinName}, "remove the account"},
		{[]string{"/usr/bin/dscl", ".", "-delete", "/Groups/" + DarwinName}, "remove its group"},
		{[]string{"/bin/rm", "-rf", DarwinHome}, "remove its home"},
	}}
}
