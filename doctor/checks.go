package doctor

// Check is one named check over the gathered facts. Run returns one result
// per subject (one per runtime and CVE, one per agent CLI).
type Check struct {
	Name string
	Run  func(f *Facts) []Result
}

// Checks returns doctor's checks in the order they are reported: the
// kernel and its user namespaces, seccomp, the LSMs, cgroups, the runtimes
// and their CVEs, where agentbox runs, the engines and agents beside it, and
// last the end-to-end self-test.
func Checks() []Check {
	return []Check{
		{"kernel", checkKernel},
		{"userns-max", checkUserNSMax},
		{"userns-unprivileged-clone", checkUnprivClone},
		{"userns-apparmor-restrict", checkAppArmorRestrict},
		{"userns-create", checkUserNSCreate},
		{"subids", checkSubIDs},
		{"seccomp", checkSeccomp},
		{"seccomp-actions", checkSeccompActions},
		{"lsm-active", checkLSMActive},
		{"selinux", checkSELinux},
		{"apparmor", checkAppArmor},
		{"landlock", checkLandlock},
		{"mac", checkMAC},
		{"cgroup", checkCgroup},
		{"run-root", checkRunRoot},
		{"leftovers", checkLeftovers},
		{"runtimes", checkRuntimes},
		{"runtime-cves", checkRuntimeCVEs},
		{"container", checkContainer},
		{"vm", checkVM},
		{"docker", checkDocker},
		{"docker-userns-running", checkDockerUserNS},
		{"podman", checkPodman},
		{"containerd", checkContainerd},
		{"darwin-pf", checkDarwinPF},
		{"darwin-pf-anchors", checkDarwinPFAnchors},
		{"darwin-account", checkDarwinAccount},
		{"agents", checkAgents},
		{"selftest", checkSelfTest},
	}
}
