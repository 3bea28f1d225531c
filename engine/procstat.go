package engine

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// processStart reads pid's start time (field 22 of /proc/PID/stat) and
// whether it is a zombie.
func processStart(pid int) (start uint64, zombie bool, err error) {
	f, err := readStat(pid)
	if err != nil {
		return 0, false, err
	}
	if len(f) < 20 {
		return 0, false, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	start, err = strconv.ParseUint(string(f[19]), 10, 64)
	return start, f[0][0] == 'Z' || f[0][0] == 'X', err
}

// ParentPid is pid's parent (field 4 of /proc/PID/stat), 0 if unknown.
func ParentPid(pid int) int {
	if pid <= 0 {
		return 0
	}
	f, err := readStat(pid)
	if err != nil || len(f) < 2 {
		return 0
	}
	ppid, err := strconv.Atoi(string(f[1]))
	if err != nil {
		return 0
	}
	return ppid
}

func readStat(pid int) ([][]byte, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil, err
	}
	f, err := statFields(b)
	if err != nil {
		return nil, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	return f, nil
}

// statFields are the fields of a /proc/PID/stat line after the command
// name's closing paren, the state first (field 3): the name may hold
// spaces and parentheses, so the fields are counted from the last ')'.
func statFields(b []byte) ([][]byte, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil, fmt.Errorf("no command name")
	}
	f := bytes.Fields(b[i+1:])
	if len(f) == 0 || len(f[0]) == 0 {
		return nil, fmt.Errorf("no state")
	}
	return f, nil
}
