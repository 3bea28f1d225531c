package denials

import "golang.org/x/sys/unix"

// table holds every syscall of profiles.LoggedSyscalls (a test checks it),
// with the arguments that tell what was attempted. The numbers are this
// architecture's; the argument layout is the same on amd64 and arm64.
var table = map[string]syscall{
	"mount":             {unix.SYS_MOUNT, []arg{{0, "source", str}, {1, "target", str}, {2, "fstype", str}, {3, "flags", hex}}},
	"umount2":           {unix.SYS_UMOUNT2, []arg{{0, "target", str}, {1, "flags", hex}}},
	"pivot_root":        {unix.SYS_PIVOT_ROOT, []arg{{0, "new_root", str}, {1, "put_old", str}}},
	"chroot":            {unix.SYS_CHROOT, []arg{{0, "path", str}}},
	"move_mount":        {unix.SYS_MOVE_MOUNT, []arg{{0, "from_dfd", num}, {1, "from", str}, {2, "to_dfd", num}, {3, "to", str}, {4, "flags", hex}}},
	"open_tree":         {unix.SYS_OPEN_TREE, []arg{{0, "dfd", num}, {1, "path", str}, {2, "flags", hex}}},
	"fsopen":            {unix.SYS_FSOPEN, []arg{{0, "fstype", str}, {1, "flags", hex}}},
	"fsmount":           {unix.SYS_FSMOUNT, []arg{{0, "fd", num}, {1, "flags", hex}, {2, "attr", hex}}},
	"fsconfig":          {unix.SYS_FSCONFIG, []arg{{0, "fd", num}, {1, "cmd", num}, {2, "key", str}}},
	"fspick":            {unix.SYS_FSPICK, []arg{{0, "dfd", num}, {1, "path", str}, {2, "flags", hex}}},
	"mount_setattr":     {unix.SYS_MOUNT_SETATTR, []arg{{0, "dfd", num}, {1, "path", str}, {2, "flags", hex}}},
	"ptrace":            {unix.SYS_PTRACE, []arg{{0, "request", ptrace}, {1, "pid", num}}},
	"process_vm_readv":  {unix.SYS_PROCESS_VM_READV, []arg{{0, "pid", num}}},
	"process_vm_writev": {unix.SYS_PROCESS_VM_WRITEV, []arg{{0, "pid", num}}},
	"bpf":               {unix.SYS_BPF, []arg{{0, "cmd", num}}},
	"keyctl":            {unix.SYS_KEYCTL, []arg{{0, "op", num}}},
	"add_key":           {unix.SYS_ADD_KEY, []arg{{0, "type", str}, {1, "description", str}}},
	"request_key":       {unix.SYS_REQUEST_KEY, []arg{{0, "type", str}, {1, "description", str}}},
	"kexec_load":        {unix.SYS_KEXEC_LOAD, []arg{{0, "entry", hex}, {1, "segments", num}, {3, "flags", hex}}},
	"kexec_file_load":   {unix.SYS_KEXEC_FILE_LOAD, []arg{{0, "kernel_fd", num}, {1, "initrd_fd", num}, {4, "flags", hex}}},
	"init_module":       {unix.SYS_INIT_MODULE, []arg{{1, "len", num}, {2, "params", str}}},
	"finit_module":      {unix.SYS_FINIT_MODULE, []arg{{0, "fd", num}, {1, "params", str}, {2, "flags", hex}}},
	"delete_module":     {unix.SYS_DELETE_MODULE, []arg{{0, "name", str}, {1, "flags", hex}}},
	"unshare":           {unix.SYS_UNSHARE, []arg{{0, "flags", clone}}},
	"setns":             {unix.SYS_SETNS, []arg{{0, "fd", num}, {1, "nstype", clone}}},
	"perf_event_open":   {unix.SYS_PERF_EVENT_OPEN, []arg{{1, "pid", num}, {2, "cpu", num}, {3, "group_fd", num}, {4, "flags", hex}}},
	"userfaultfd":       {unix.SYS_USERFAULTFD, []arg{{0, "flags", hex}}},
	"io_uring_setup":    {unix.SYS_IO_URING_SETUP, []arg{{0, "entries", num}}},
	"io_uring_enter":    {unix.SYS_IO_URING_ENTER, []arg{{0, "fd", num}, {1, "to_submit", num}, {3, "flags", hex}}},
	"io_uring_register": {unix.SYS_IO_URING_REGISTER, []arg{{0, "fd", num}, {1, "opcode", num}}},
}

var cloneFlags = []flag{
	{unix.CLONE_NEWUSER, "CLONE_NEWUSER"},
	{unix.CLONE_NEWNS, "CLONE_NEWNS"},
	{unix.CLONE_NEWPID, "CLONE_NEWPID"},
	{unix.CLONE_NEWNET, "CLONE_NEWNET"},
	{unix.CLONE_NEWUTS, "CLONE_NEWUTS"},
	{unix.CLONE_NEWIPC, "CLONE_NEWIPC"},
	{unix.CLONE_NEWCGROUP, "CLONE_NEWCGROUP"},
	{unix.CLONE_NEWTIME, "CLONE_NEWTIME"},
	{unix.CLONE_FILES, "CLONE_FILES"},
	{unix.CLONE_FS, "CLONE_FS"},
	{unix.CLONE_SYSVSEM, "CLONE_SYSVSEM"},
}

var ptraceRequests = map[uint64]string{
	unix.PTRACE_TRACEME: "PTRACE_TRACEME", unix.PTRACE_PEEKTEXT: "PTRACE_PEEKTEXT",
	unix.PTRACE_PEEKDATA: "PTRACE_PEEKDATA", unix.PTRACE_POKETEXT: "PTRACE_POKETEXT",
	unix.PTRACE_POKEDATA: "PTRACE_POKEDATA", unix.PTRACE_ATTACH: "PTRACE_ATTACH",
	unix.PTRACE_DETACH: "PTRACE_DETACH", unix.PTRACE_SEIZE: "PTRACE_SEIZE",
}
