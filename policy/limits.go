package policy

// AppArmorProfile is the name under which agentbox's AppArmor profile is
// loaded (see package apparmor).
const AppArmorProfile = "agentbox-default"

func (r *resolver) resolveLimits() error {
	l := r.p.Limits
	mem := l.Memory
	if mem == "" {
		mem = DefaultMemory
	}
	bytes, err := ParseBytes(mem)
	if err != nil {
		return &InputError{Field: "limits.memory", Msg: err.Error()}
	}
	rl := &ResolvedLimits{MemoryBytes: bytes, Pids: l.Pids, CPUWeight: l.CPUWeight, CgroupV2: r.h.CgroupV2}
	if rl.Pids == 0 {
		rl.Pids = DefaultPids
	}
	if rl.CPUWeight == 0 {
		rl.CPUWeight = DefaultCPUWeight
	}
	if !r.h.CanLimit && !r.engine() { // an engine's daemon applies them
		r.residual("no-resource-limits", "this host cannot apply cgroup limits for this user: "+r.h.LimitReason)
		return nil
	}
	r.plan.Limits = rl
	return nil
}

func (r *resolver) resolveLSM() error {
	switch {
	case r.kubernetes():
		r.plan.LSM = podLSM()
	case r.user():
		r.plan.LSM = LSM{Kind: LSMNone}
		r.userResiduals()
	case r.h.SELinux:
		r.plan.LSM = LSM{Kind: LSMSELinux, ProcessLabel: r.h.SELinuxLabels[0], MountLabel: r.h.SELinuxLabels[1]}
	case r.h.AppArmor && (r.h.AppArmorReady || r.engine()): // a project carries the profile, loaded by whoever starts it
		r.plan.LSM = LSM{Kind: LSMAppArmor, AppArmorProfile: AppArmorProfile}
	case r.h.AppArmor:
		r.plan.LSM = LSM{Kind: LSMNone}
		r.residual("apparmor-profile-not-loaded", "AppArmor is enabled but the profile "+AppArmorProfile+" is not loaded and an ordinary user cannot load it (as root: agentbox run once, or apparmor_parser -r the rendered profile); Landlock applies instead")
	default:
		r.plan.LSM = LSM{Kind: LSMNone}
		why := "the agent is confined with Landlock instead where the kernel has it (the run records the ABI)"
		if r.gvisor() {
			why = "under gVisor Landlock does not apply either (residual gvisor-landlock-absent): the Sentry's own kernel confines the agent"
		}
		r.residual("lsm-unavailable", "neither SELinux nor AppArmor is enabled on this host: "+why)
	}
	return nil
}

func (r *resolver) residual(code, reason string) {
	r.plan.Residuals = append(r.plan.Residuals, Residual{Code: code, Reason: reason})
}
