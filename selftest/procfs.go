package selftest

import (
	"bufio"
	"bytes"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
)

// Mount is one line of /proc/<pid>/mountinfo.
type Mount struct {
	ID, Parent int
	Dev        string // "major:minor"
	Root       string // path inside the filesystem that the mount shows
	MountPoint string
	Options    string // per-mount options ("rw,nosuid,nodev")
	FSType     string
	Source     string
}

// hasOption reports whether the per-mount options contain opt.
func (m Mount) hasOption(opt string) bool {
	return slices.Contains(strings.Split(m.Options, ","), opt)
}

// ParseStatus parses /proc/<pid>/status into its "Key: value" pairs.
func ParseStatus(b []byte) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if ok {
			out[k] = strings.TrimSpace(v)
		}
	}
	return out
}

// IDMapRange is one line of uid_map or gid_map.
type IDMapRange struct{ Inside, Outside, Count uint64 }

// ParseIDMap parses /proc/<pid>/uid_map or gid_map.
func ParseIDMap(b []byte) ([]IDMapRange, error) {
	var out []IDMapRange
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) != 3 {
			return nil, fmt.Errorf("id map: malformed line %q", line)
		}
		var r IDMapRange
		var err [3]error
		r.Inside, err[0] = strconv.ParseUint(f[0], 10, 32)
		r.Outside, err[1] = strconv.ParseUint(f[1], 10, 32)
		r.Count, err[2] = strconv.ParseUint(f[2], 10, 33)
		for _, e := range err {
			if e != nil {
				return nil, fmt.Errorf("id map: %q: %w", line, e)
			}
		}
		out = append(out, r)
	}
	return out, nil
}

// isInitialIDMap reports whether m is the initial namespace's full identity.
func isInitialIDMap(m []IDMapRange) bool {
	return len(m) == 1 && m[0] == IDMapRange{0, 0, 4294967295}
}

// mapsHostRoot reports whether host uid 0 appears on the outside of m.
func mapsHostRoot(m []IDMapRange) bool {
	for _, r := range m {
		if r.Outside == 0 && r.Count > 0 {
			return true
		}
	}
	return false
}

// parseUnixPaths returns the bound paths of /proc/net/unix ("@name" for
// abstract sockets).
func parseUnixPaths(b []byte) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for first := true; sc.Scan(); first = false {
		f := strings.Fields(sc.Text())
		if first || len(f) < 8 {
			continue
		}
		out = append(out, f[7])
	}
	return out
}

// parseNetDev returns the interface names of /proc/net/dev.
func parseNetDev(b []byte) []string {
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		name, _, ok := strings.Cut(line, ":")
		if ok && !strings.Contains(name, "|") {
			out = append(out, strings.TrimSpace(name))
		}
	}
	return out
}

// hasDefaultRoute4 reports whether /proc/net/route has a 0.0.0.0/0 entry.
func hasDefaultRoute4(b []byte) bool {
	for i, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if i > 0 && len(f) >= 8 && f[1] == "00000000" && f[7] == "00000000" {
			return true
		}
	}
	return false
}

// hasDefaultRoute6 reports whether /proc/net/ipv6_route has a ::/0 entry
// that is not the kernel's unreachable placeholder on lo.
func hasDefaultRoute6(b []byte) bool {
	const zero = "00000000000000000000000000000000"
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 10 || f[0] != zero || f[1] != "00" {
			continue
		}
		flags, err := strconv.ParseUint(f[8], 16, 32)
		const rtfReject = 0x0200
		if err == nil && flags&rtfReject == 0 {
			return true
		}
	}
	return false
}

// parseNameservers returns the nameserver addresses of a resolv.conf.
func parseNameservers(b []byte) []string {
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "nameserver" {
			out = append(out, f[1])
		}
	}
	return out
}

// within reports whether p is dir or below it, for clean absolute paths.
func within(p, dir string) bool {
	p, dir = path.Clean(p), path.Clean(dir)
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}
