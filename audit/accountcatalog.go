package audit

// The account audit's own codes (agentbox audit --user): faults of a user
// account the agent would run as, which no container code describes. The
// account audit also reports container-socket-mounted (docker or lxd
// membership, an engine socket it can open), secret-in-environment (a
// credential its login files export) and auto-approve-permission-mode
// (agent settings under its home).
const (
	CodeHomeReadable     = "home-directory-readable"
	CodeCredReadable     = "credential-file-readable"
	CodePrivilegedGroup  = "privileged-group-member"
	CodeSudoRights       = "sudo-rights"
	accountResidualPerms = "what other users leave world-readable outside their homes (/tmp, /srv); the kernel the account shares with you"
)

func init() {
	for _, r := range []Rule{
		{
			Code: CodeHomeReadable, Severity: High,
			Title:    "the account can list another user's home directory (other-read, a group, or an ACL)",
			Symptom:  "the agent, running as the account, lists your home and opens whatever in it is readable",
			Fix:      "chmod 0700 the home (or chmod o-rwx,g-rwx), remove the ACL entry (setfacl -x u:ACCOUNT HOME), or take the account out of the group",
			Residual: accountResidualPerms,
		},
		{
			Code: CodeCredReadable, Severity: Critical,
			Title:    "the account can read a key or credential file of another user (~/.ssh, ~/.aws, ~/.config/gh, ~/.docker/config.json, ~/.netrc, ~/.kube, .env)",
			Symptom:  "the agent reads your SSH key or cloud token and uses it from anywhere",
			Fix:      "chmod 0600 the file and 0700 its directory and home; remove the ACL entry or the group that grants it",
			Residual: accountResidualPerms,
		},
		{
			Code: CodePrivilegedGroup, Severity: High,
			Title:    "the account is in a privileged group (sudo, wheel, admin, adm, staff, lxd)",
			Symptom:  "the agent uses the group's power: sudo as an administrator, the system logs (adm), other users' homes (staff on macOS)",
			Fix:      "remove the account from the group: gpasswd -d ACCOUNT GROUP (macOS: dseditgroup -o edit -d ACCOUNT -t user GROUP)",
			Residual: "none",
		},
		{
			Code: CodeSudoRights, Severity: High,
			Title:    "sudoers gives the account rights (critical with NOPASSWD or !authenticate)",
			Symptom:  "the agent runs commands as root or as you through sudo",
			Fix:      "remove the sudoers line (visudo -f FILE); the dedicated account needs none until agentbox's own helper rule",
			Residual: "none",
		},
	} {
		catalog[r.Code] = r
	}
}
