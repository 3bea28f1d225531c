package launcher

import (
	"os"
	"path/filepath"
	"testing"
)

// fakeProc writes a /proc tree: each status line set, and init's children
// files, one per task.
func fakeProc(t *testing.T, status map[string]string, children map[string]string) string {
	t.Helper()
	root := t.TempDir()
	write := func(rel, data string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for pid, st := range status {
		write(filepath.Join(pid, "status"), st)
	}
	for task, kids := range children {
		write(filepath.Join("100", "task", task, "children"), kids)
	}
	return root
}

func TestAgentHostPIDAmongInitsChildren(t *testing.T) {
	status := map[string]string{
		"100": "PPid:\t1\nNSpid:\t100\t1\n",
		"200": "PPid:\t100\nNSpid:\t200\t7\n",
		"300": "PPid:\t100\nNSpid:\t300\t9\n",
		"400": "PPid:\t55\nNSpid:\t400\t9\n", // pid 9 of another namespace, not init's child
	}
	root := fakeProc(t, status, map[string]string{"100": "200 ", "101": "300 "})
	if pid, err := agentHostPID(root, 100, 9); err != nil || pid != 300 {
		t.Fatalf("agentHostPID = %d, %v; want 300 (a child listed by init's second thread)", pid, err)
	}
	// A listed child whose status says another parent or pid is refused, as
	// HostPID refuses it; the scan of every process then decides.
	root = fakeProc(t, status, map[string]string{"100": "400"})
	if pid, err := agentHostPID(root, 100, 9); err != nil || pid != 300 {
		t.Fatalf("agentHostPID = %d, %v; want 300 from the full scan", pid, err)
	}
	if pid, err := agentHostPID(root, 100, 8); err == nil {
		t.Fatalf("agentHostPID of no such child = %d, want an error", pid)
	}
	// Without children files (no task directory), the full scan.
	root = fakeProc(t, status, nil)
	if pid, err := agentHostPID(root, 100, 7); err != nil || pid != 200 {
		t.Fatalf("agentHostPID = %d, %v; want 200 from the full scan", pid, err)
	}
}
