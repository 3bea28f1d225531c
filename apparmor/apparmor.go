// Package apparmor renders agentbox's AppArmor profile and loads it where
// AppArmor is enabled.
//
// The profile (profile.tmpl, rendered for DefaultName into RenderedFile)
// is modelled on Docker's docker-default but stricter: it grants no
// capabilities, denies mount, remount, umount and pivot_root, keeps /proc
// writes to the sandbox's own /proc/<pid> entries, keeps /sys read-only,
// hides firmware, securityfs, debugfs and the kernel's memory image, and
// confines signals and ptrace to the sandbox's own processes. Every rule
// carries its reason in the template.
//
// AppArmor is only one layer: where it is not enabled (Enabled reports
// false, Load returns ErrNotEnabled), the caller records that as a residual
// instead of skipping it silently. Loading needs root (CAP_MAC_ADMIN) and
// apparmor_parser from the Debian package "apparmor".
package apparmor

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// ErrNotEnabled is returned by Load on hosts where AppArmor is not enabled.
var ErrNotEnabled = errors.New("AppArmor is not enabled on this host")

// Status is what Check found about AppArmor on a host.
type Status struct {
	Enabled bool
	Reason  string // why it is not enabled, with the fix where there is one; empty when enabled
}

// Check inspects the host whose root directory is root (normally "/";
// tests pass a fixture): AppArmor is enabled when the kernel parameter
// /sys/module/apparmor/parameters/enabled reads "Y" and AppArmor's
// securityfs directory /sys/kernel/security/apparmor exists, which it does
// only when AppArmor is an active LSM and securityfs is mounted.
func Check(root string) Status {
	param := filepath.Join(root, "sys/module/apparmor/parameters/enabled")
	b, err := os.ReadFile(param)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return Status{Reason: "the kernel has no AppArmor module (no /sys/module/apparmor)"}
	case err != nil:
		return Status{Reason: fmt.Sprintf("cannot read %s: %v", param, err)}
	case strings.TrimSpace(string(b)) != "Y":
		return Status{Reason: "AppArmor is disabled on the kernel command line; boot with apparmor=1 security=apparmor (or add apparmor to lsm=)"}
	}
	fi, err := os.Stat(filepath.Join(root, "sys/kernel/security/apparmor"))
	if err != nil || !fi.IsDir() {
		return Status{Reason: "AppArmor is not an active LSM or securityfs is not mounted (no /sys/kernel/security/apparmor); add apparmor to lsm= on the kernel command line, or mount -t securityfs securityfs /sys/kernel/security"}
	}
	return Status{Enabled: true}
}

// Load compiles text with apparmor_parser and loads it into the kernel as
// the profile name, replacing an older version of it (apparmor_parser -Kr:
// replace, and leave the system's profile cache alone). text must declare
// "profile NAME". On hosts without AppArmor it returns an error wrapping
// ErrNotEnabled that gives the reason.
func Load(name, text string) error {
	return loader{root: "/", parser: "apparmor_parser"}.load(name, text)
}

// IsLoaded reports whether the kernel has a profile called name.
func IsLoaded(name string) (bool, error) { return isLoaded("/", name) }

// loader is Load with the host root and the parser command replaceable,
// for tests.
type loader struct {
	root   string
	parser string
}

func (l loader) load(name, text string) error {
	if err := validName(name); err != nil {
		return fmt.Errorf("load AppArmor profile: %w", err)
	}
	if !declares(text, name) {
		return fmt.Errorf("load AppArmor profile %s: the text does not declare 'profile %s'", name, name)
	}
	if st := Check(l.root); !st.Enabled {
		return fmt.Errorf("load AppArmor profile %s: %w: %s", name, ErrNotEnabled, st.Reason)
	}
	parser, err := exec.LookPath(l.parser)
	if err != nil {
		return fmt.Errorf("load AppArmor profile %s: %s not found (apt-get install apparmor)", name, l.parser)
	}
	path, err := writeTemp(text)
	if err != nil {
		return fmt.Errorf("load AppArmor profile %s: %w", name, err)
	}
	defer os.Remove(path)
	out, err := exec.Command(parser, "-Kr", path).CombinedOutput()
	if err != nil {
		return fmt.Errorf("load AppArmor profile %s: apparmor_parser -Kr: %w: %s", name, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// declares reports whether text has a "profile NAME" line.
func declares(text, name string) bool {
	re := regexp.MustCompile(`(?m)^\s*profile\s+` + regexp.QuoteMeta(name) + `[\s{]`)
	return re.MatchString(text)
}

func writeTemp(text string) (string, error) {
	f, err := os.CreateTemp("", "agentbox-apparmor-*")
	if err != nil {
		return "", err
	}
	_, werr := f.WriteString(text)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// isLoaded scans root/sys/kernel/security/apparmor/profiles, whose lines
// read "NAME (MODE)".
func isLoaded(root, name string) (bool, error) {
	f, err := os.Open(filepath.Join(root, "sys/kernel/security/apparmor/profiles"))
	if err != nil {
		return false, fmt.Errorf("list loaded AppArmor profiles: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if n, _, ok := strings.Cut(sc.Text(), " ("); ok && n == name {
			return true, nil
		}
	}
	if err := sc.Err(); err != nil {
		return false, fmt.Errorf("list loaded AppArmor profiles: %w", err)
	}
	return false, nil
}
