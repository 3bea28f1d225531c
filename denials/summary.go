package denials

import (
	"fmt"
	"strconv"
	"strings"
)

// kind is how one argument is shown.
type kind int

const (
	hex    kind = iota // 0x20000
	num                // a signed int: an fd, a pid, a count (-100 is AT_FDCWD)
	str                // a pointer to a NUL-terminated string, read from the caller
	clone              // CLONE_* flags by name
	ptrace             // a ptrace request by name
)

// arg is one argument a summary shows: its index in the syscall, its name.
type arg struct {
	i    int
	name string
	kind kind
}

// syscall is one logged syscall: its number on this architecture and the
// arguments worth a summary.
type syscall struct {
	nr   int
	args []arg
}

// names maps this architecture's syscall numbers to the names of table.
var names = func() map[int]string {
	m := make(map[int]string, len(table))
	for name, s := range table {
		m[s.nr] = name
	}
	return m
}()

// Name is the logged syscall numbered nr on this architecture, or
// "syscall NR" for a number the table does not have.
func Name(nr int) string {
	if n, ok := names[nr]; ok {
		return n
	}
	return "syscall " + strconv.Itoa(nr)
}

// Reader reads the NUL-terminated string at addr in the caller's memory;
// ok is false when it could not.
type Reader func(addr uint64) (s string, ok bool)

// Summary is the one-line summary of a call of name with args: each
// argument table names as name=value, strings read with read (nil: show
// every pointer as a number). A syscall the table lacks shows its first
// four arguments in hex.
func Summary(name string, args [6]uint64, read Reader) string {
	s, ok := table[name]
	if !ok {
		return fmt.Sprintf("args=%#x,%#x,%#x,%#x", args[0], args[1], args[2], args[3])
	}
	parts := make([]string, 0, len(s.args))
	for _, a := range s.args {
		parts = append(parts, a.name+"="+a.kind.format(args[a.i], read))
	}
	return strings.Join(parts, " ")
}

func (k kind) format(v uint64, read Reader) string {
	switch k {
	case num:
		return strconv.Itoa(int(int32(v))) // ints, fds and pids are 32-bit in these syscalls
	case str:
		if v == 0 {
			return "NULL"
		}
		if read != nil {
			if s, ok := read(v); ok {
				return quote(s)
			}
		}
	case clone:
		return flagNames(v, cloneFlags)
	case ptrace:
		if n, ok := ptraceRequests[v]; ok {
			return n
		}
	case hex:
	}
	return fmt.Sprintf("%#x", v)
}

// quote leaves a plain string as it is and quotes one with spaces, quotes,
// an equals sign or unprintable runes, so that a summary splits on spaces.
func quote(s string) string {
	if s != "" && !strings.ContainsFunc(s, func(c rune) bool {
		return c == ' ' || c == '"' || c == '\'' || c == '=' || c == '\\' || !strconv.IsPrint(c)
	}) {
		return s
	}
	return strconv.Quote(s)
}

// flag is one named bit.
type flag struct {
	bit  uint64
	name string
}

// flagNames writes v as the names of its known bits joined by |, the rest
// in hex; 0 is "0x0".
func flagNames(v uint64, known []flag) string {
	var out []string
	for _, f := range known {
		if v&f.bit != 0 {
			out = append(out, f.name)
			v &^= f.bit
		}
	}
	if v != 0 || len(out) == 0 {
		out = append(out, fmt.Sprintf("%#x", v))
	}
	return strings.Join(out, "|")
}
