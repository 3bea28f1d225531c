package nsexec

import "testing"

func TestCreateVerb(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		want int
	}{
		{[]string{"runc", "--root", "/run/r", "--log", "/l", "--log-format", "json", "create", "--bundle", "/b", "id"}, 7},
		{[]string{"runc", "create", "id"}, 1},
		{[]string{"runc", "--root", "/run/r", "start", "id"}, -1},
		{[]string{"runc", "--root", "/run/r", "delete", "--force", "create"}, -1},
		{[]string{"runc", "--root", "create", "--systemd-cgroup", "create", "id"}, 4},
		{[]string{"runc"}, -1},
	} {
		if got := CreateVerb(tc.argv); got != tc.want {
			t.Errorf("CreateVerb(%q) = %d, want %d", tc.argv, got, tc.want)
		}
	}
}
