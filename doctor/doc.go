// Package doctor decides whether a host can provide agentbox's boundary,
// which of its layers are weaker here, and the exact fix for each failure.
//
// Gather reads the host once, through a Host (a root directory for files plus
// a small System interface for commands, owners and syscalls), into Facts.
// Checks is an ordered list of named functions over those facts; each returns
// Results with an id, a status (PASS, WARN, FAIL, UNKNOWN), a detail and a fix
// line. Evaluate turns the results into a Report: the layers that hold, the
// residuals, and the verdict. Tests feed captured /proc, /sys and /etc trees
// and command outputs instead of this machine.
//
// Security-relevant defaults, and how they are decided:
//
//   - Fail closed. A FAIL means the host cannot provide the boundary. An
//     UNKNOWN on a check that decides a layer (Result.Layer is set) blocks too:
//     doctor could not establish that the layer holds. Only WARN results are
//     accepted residuals. Exit code 4 (ExitHost) follows from any blocking
//     result; 0 from none.
//   - The end-to-end proof is a throwaway sandbox running the full self-test
//     (Options.SelfTest). Until the caller supplies it, the selftest check is
//     UNKNOWN and blocks: host facts alone never prove the boundary.
//   - OCI runtimes are judged by engine/advisory, the table of CVEs kept as
//     data with its sources, with the same judgement `agentbox run` applies
//     before it launches. A runtime installed from a package is judged by the
//     package manager's version against the distribution's fixed version when
//     the table knows it, because distributions backport fixes; when it does
//     not, the result is UNKNOWN with the command that settles it, never FAIL.
//     A binary that no package owns is judged by its upstream version. Each
//     CVE is judged for the way run launches: the checks, and the verdict,
//     are about the default root (read-only host binds, no image) on the
//     default runtime; a CVE whose attack needs what that mode lacks (an
//     attacker-controlled --rootfs, say) is a WARN residual with the reason.
//     Report.Modes says what run does with each runtime, with the default
//     root and with --rootfs. Low-severity CVEs are WARN, never blocking.
//   - Host hygiene that does not change the sandbox (the Docker engine, agent
//     CLIs' auto-approve settings, running inside a VM) is reported with
//     Layer "" and never blocks.
//
// What doctor does not do: it changes nothing on the host (every fix is a
// line for the administrator to run), it does not scan for kernel CVEs, and
// its CVE table is only as current as its "checked" date.
package doctor
