package launcher

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"

	"github.com/agentbox/agentbox/policy"
)

// FindInit locates agentbox-init: $AGENTBOX_INIT, else beside the
// running executable, else on PATH. It must be the static build (make
// build).
func FindInit(getenv func(string) string) (string, error) {
	candidates := []string{getenv("AGENTBOX_INIT")}
	if self, err := os.Executable(); err == nil {
		if real, err := filepath.EvalSymlinks(self); err == nil {
			candidates = append(candidates, filepath.Join(filepath.Dir(real), "agentbox-init"))
		}
	}
	if p, err := exec.LookPath("agentbox-init"); err == nil {
		candidates = append(candidates, p)
	}
	for _, c := range candidates {
		if c == "" {
			continue
		}
		if fi, err := os.Stat(c); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return filepath.EvalSymlinks(c)
		}
	}
	return "", &policy.HostError{What: "agentbox-init not found beside agentbox or on PATH", Fix: "build both with 'make build', or point AGENTBOX_INIT at it"}
}

// initBinary is agentbox-init on the host: src, where it is, and reach,
// the path the sandbox's mapped ids can reach (agentbox-init is bound into
// the sandbox and executes runtimes in namespaces whose ids are not the
// launcher's): src itself when it and every directory above it are
// searchable by others, else a copy under the run root, named by src's
// size and mtime, which install makes after planning.
type initBinary struct{ src, reach string }

// locateInit finds where the sandbox will reach bin; it only reads.
func locateInit(bin, runRoot string) (initBinary, error) {
	if reachableByOthers(bin) {
		return initBinary{src: bin, reach: bin}, nil
	}
	fi, err := os.Stat(bin)
	if err != nil {
		return initBinary{}, err
	}
	name := filepath.Base(bin) + "-" + strconv.FormatInt(fi.Size(), 10) + "-" + strconv.FormatInt(fi.ModTime().UnixNano(), 10)
	return initBinary{src: bin, reach: filepath.Join(runRoot, "bin", name)}, nil
}

// install makes the copy at reach, once per version.
func (b initBinary) install() error {
	if b.reach == b.src {
		return nil
	}
	if _, err := os.Stat(b.reach); err == nil {
		return nil
	}
	return copyForSandbox(b.src, b.reach)
}

// reachableByOthers checks the "other" execute bit of path and each parent.
func reachableByOthers(path string) bool {
	for p := path; ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err != nil || fi.Mode().Perm()&0o001 == 0 {
			return false
		}
		if p == "/" {
			return true
		}
	}
}

// copyForSandbox copies self to dst, atomically.
func copyForSandbox(self, dst string) error {
	dir := filepath.Dir(dst)
	if err := os.MkdirAll(dir, 0o711); err != nil {
		return err
	}
	src, err := os.Open(self)
	if err != nil {
		return err
	}
	defer src.Close()
	tmp, err := os.CreateTemp(dir, ".agentbox-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := io.Copy(tmp, src); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o755); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), dst)
}
