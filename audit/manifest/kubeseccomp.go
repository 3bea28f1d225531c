package manifest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	. "github.com/agentbox/agentbox/audit"
	"github.com/agentbox/agentbox/seccomp"
)

// The Security Profiles Operator's seccomp profile
// (security-profiles-operator.x-k8s.io/v1beta1 SeccompProfile, v0.10):
// cluster-scoped, written by the operator to the kubelet's seccomp root as
// operator/NAME.json, which is what a pod names as its Localhost profile.
const (
	spoGroup      = "security-profiles-operator.x-k8s.io/"
	spoProfileDir = "operator"
)

// spoSeccompProfile is the SeccompProfile's spec as the operator's CRD
// declares it: an OCI seccomp profile (less defaultErrnoRet, which the
// runtime defaults to EPERM), a base profile to union and a switch that
// makes the operator skip it.
type spoSeccompProfile struct {
	Spec struct {
		Disabled         bool            `json:"disabled,omitempty"`
		BaseProfileName  string          `json:"baseProfileName,omitempty"`
		DefaultAction    string          `json:"defaultAction"`
		Architectures    []string        `json:"architectures,omitempty"`
		ListenerPath     string          `json:"listenerPath,omitempty"`
		ListenerMetadata string          `json:"listenerMetadata,omitempty"`
		Syscalls         json.RawMessage `json:"syscalls,omitempty"`
		Flags            []string        `json:"flags,omitempty"`
	} `json:"spec"`
}

// kubeProfile is a seccomp profile a Localhost path resolves to, or why it
// cannot be read.
type kubeProfile struct {
	p   *specs.LinuxSeccomp
	err error
}

// addSeccompProfile reads an operator SeccompProfile of the input under
// the Localhost path the operator installs it at.
func (in *kubeInput) addSeccompProfile(d *kubeDoc) error {
	var sp spoSeccompProfile
	if err := d.decode(nil, &struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   any    `json:"metadata"`
		*spoSeccompProfile
		Status any `json:"status,omitempty"`
	}{spoSeccompProfile: &sp}, true); err != nil {
		return err
	}
	name := d.head.Metadata.Name
	if !strings.HasSuffix(name, ".json") {
		name += ".json"
	}
	key := path.Join(spoProfileDir, filepath.Base(d.head.Metadata.Namespace), filepath.Base(name)) // GetProfilePath
	var kp kubeProfile
	switch s := sp.Spec; {
	case s.Disabled:
		kp.err = fmt.Errorf("SeccompProfile %s is disabled: the operator does not install it", d.head.Metadata.Name)
	case s.BaseProfileName != "":
		kp.err = fmt.Errorf("SeccompProfile %s unions the base profile %s, which this audit does not resolve", d.head.Metadata.Name, s.BaseProfileName)
	default:
		oci, err := json.Marshal(map[string]any{"defaultAction": s.DefaultAction, "architectures": s.Architectures, "syscalls": s.Syscalls, "flags": s.Flags, "listenerPath": s.ListenerPath, "listenerMetadata": s.ListenerMetadata})
		if err == nil {
			kp.p, err = seccomp.Parse("SeccompProfile "+d.head.Metadata.Name, oci, seccomp.Target{})
		}
		kp.err = err
	}
	if in.seccompProfiles == nil {
		in.seccompProfiles = map[string]kubeProfile{}
	}
	in.seccompProfiles[key] = kp
	return nil
}

// localhostSeccomp compares a pod's Localhost seccomp profile with
// agentbox's when the input has it: an operator SeccompProfile of the
// input, or a file below KubeOptions.SeccompRoot (the nodes' kubelet
// seccomp root, as a directory of the input). Otherwise the comparison
// stays unmade (an unknown finding).
func (in *kubeInput) localhostSeccomp(s *Seccomp, lp string, caps []string, ko KubeOptions) {
	clean := path.Clean("/" + lp)[1:]
	if lp == "" || clean != lp {
		s.Error = fmt.Sprintf("localhostProfile %q is not a clean relative path", lp)
		return
	}
	if kp, ok := in.seccompProfiles[lp]; ok {
		if kp.err != nil {
			s.Error = kp.err.Error()
			return
		}
		s.Weak, s.WeakKnown = SeccompWeak(kp.p)
		return
	}
	if ko.SeccompRoot == "" {
		return
	}
	file := filepath.Join(ko.SeccompRoot, filepath.FromSlash(lp))
	data, err := readBelow(ko.SeccompRoot, lp)
	switch {
	case errors.Is(err, os.ErrNotExist):
		s.Error = fmt.Sprintf("%s is not in %s: the nodes would have no such profile", lp, ko.SeccompRoot)
		return
	case err != nil:
		s.Error = fmt.Sprintf("%s: %v", file, err)
		return
	}
	p, err := seccomp.Parse(file, data, seccomp.Target{Caps: caps})
	if err != nil {
		s.Error = err.Error()
		return
	}
	s.Weak, s.WeakKnown = SeccompWeak(p)
}

// readBelow reads the regular file rel below dir, never outside it: a
// directory link of the input is followed inside dir only (os.Root) and
// the file itself must not be a link (one swapped in after the check still
// resolves inside dir), so a directory of an attacker's manifests cannot
// make the audit read a file elsewhere on the host; a FIFO or device is
// refused without blocking.
func readBelow(dir, rel string) ([]byte, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	if fi, err := root.Lstat(filepath.FromSlash(rel)); err != nil {
		return nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	f, err := root.OpenFile(filepath.FromSlash(rel), os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	data, err := io.ReadAll(io.LimitReader(f, maxProfileBytes+1))
	if err == nil && len(data) > maxProfileBytes {
		err = fmt.Errorf("larger than %d MiB: not a seccomp profile", maxProfileBytes>>20)
	}
	return data, err
}

// maxProfileBytes bounds a profile file the audit reads (Docker's default
// profile is about 20 KiB).
const maxProfileBytes = 4 << 20
