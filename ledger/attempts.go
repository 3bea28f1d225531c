package ledger

// Attempt is one step of an escape-prompt self-test (agentbox selftest
// --agent): what the scripted model asked the agent's shell tool to run,
// what came back through the agent's own tool output, and what refused it.
type Attempt struct {
	Name     string `json:"name"`
	Target   string `json:"target,omitempty"`
	Expect   string `json:"expect"`   // DENY or ALLOW
	Decision string `json:"decision"` // DENY, ALLOW or UNKNOWN
	Observed string `json:"observed,omitempty"`
	// DeniedBy is the denial log's entry for the attempt's syscall
	// ("seccomp mount fstype=tmpfs …"), empty when none was logged.
	DeniedBy string `json:"denied_by,omitempty"`
	Detail   string `json:"detail,omitempty"`
	Command  string `json:"command,omitempty"`
	// Output is the start of what the agent's tool printed (at most 2 KiB).
	Output string `json:"output,omitempty"`
}
