package policy

import "testing"

func TestClassifyBind(t *testing.T) {
	homes := []string{"/root", "/home/ana", "/srv/git"}
	tests := []struct {
		p    string
		f    BindFacts
		code string
		what string
	}{
		{"/var/run/docker.sock", BindFacts{}, CodeSocket, "is a container engine socket: whoever can write to it is root on the host"},
		{"/srv/x/my-podman.sock", BindFacts{}, CodeSocket, "is a container engine socket by its name or directory: whoever can write to it is root on the host"},
		{"/run/buildkit/buildkitd.sock", BindFacts{}, CodeSocket, "is a container engine socket: whoever can write to it is root on the host"},
		{"/run/containerd/s/abc", BindFacts{}, CodeSocket, "is a container engine socket by its name or directory: whoever can write to it is root on the host"},
		{"/srv/api", BindFacts{Socket: true}, CodeSocket, "is a unix socket, and any socket may be a container engine socket under another name: whoever can write to it is root on the host"},
		{"/srv/hard", BindFacts{SameFileAs: "/run/docker.sock"}, CodeSocket, "is the same file as the container engine socket /run/docker.sock: whoever can write to it is root on the host"},
		{"/run/user", BindFacts{}, CodeSocket, "holds per-user runtime sockets, rootless docker and podman among them"},
		{"/run/user/1000/bus", BindFacts{}, CodeSystem, "is inside the system directory /run"},
		{"/var/run", BindFacts{}, CodeSocket, "contains the container engine socket /run/docker.sock"},
		{"/var", BindFacts{}, CodeSystem, "is the system directory /var"},
		{"/var/lib/kubelet", BindFacts{}, CodeSocket, "contains the container engine socket /var/lib/kubelet/pod-resources/kubelet.sock"},
		{"/", BindFacts{}, CodeHostRoot, "is the host's root directory: the whole host file system, every engine socket and home directory included"},
		{"/home/ana", BindFacts{}, CodeHome, "is the home directory /home/ana"},
		{"/home/ana/.ssh", BindFacts{ReadOnly: true}, CodeHome, "is inside the home directory /home/ana; read-only does not help: keys and tokens are read, not written"},
		{"/home", BindFacts{}, CodeHome, "contains the home directory /home/ana"},
		{"/var/home", BindFacts{}, CodeHome, "holds home directories: every home directory in it is exposed"},
		{"/var/home/bob/.aws", BindFacts{}, CodeHome, "is inside the home directory /var/home/bob"},
		{"/srv", BindFacts{}, CodeHome, "contains the home directory /srv/git"},
		{"/root", BindFacts{}, CodeHome, "is the home directory /root"},
		{"/opt/app", BindFacts{ReadOnly: true}, "", ""},
		{"/opt/app", BindFacts{}, CodeSystem, "is inside the system directory /opt"},
		{"/snap/core/1", BindFacts{ReadOnly: true}, CodeSystem, "is inside the system directory /snap"},
		{"/usr/share/zoneinfo", BindFacts{ReadOnly: true}, "", ""},
		{"/etc/ld.so.cache", BindFacts{ReadOnly: true}, "", ""},
		{"/etc/shadow", BindFacts{ReadOnly: true}, CodeSystem, "is inside the system directory /etc"},
		{"/tmp", BindFacts{ReadOnly: true}, CodeSystem, "is the host's shared /tmp, which holds other users' sockets (ssh-agent, X11)"},
		{"/tmp/x", BindFacts{}, "", ""},
		// Declared workspaces and read-only paths are exempt, unless they are
		// a home, hold one, or are a system directory.
		{"/home/ana/proj/sub", BindFacts{Workspaces: []string{"/home/ana/proj"}}, "", ""},
		{"/home/ana/x", BindFacts{Workspaces: []string{"/home/ana"}}, CodeHome, "is inside the home directory /home/ana"},
		{"/etc/x", BindFacts{Workspaces: []string{"/etc"}}, CodeSystem, "is inside the system directory /etc"},
		{"/home/ana/.nvm/v20", BindFacts{ReadOnly: true, ReadOnlyPaths: []string{"/home/ana/.nvm/v20"}}, "", ""},
		{"/home/ana/.nvm/v20", BindFacts{ReadOnlyPaths: []string{"/home/ana/.nvm/v20"}}, CodeHome, "is inside the home directory /home/ana"},
		// A read-only install prefix may lie in root's home, which is a
		// system directory; a workspace there may not.
		{"/root/.pyenv/versions/3.12.1", BindFacts{ReadOnly: true, ReadOnlyPaths: []string{"/root/.pyenv/versions/3.12.1"}}, "", ""},
		{"/root/proj", BindFacts{Workspaces: []string{"/root/proj"}}, CodeHome, "is inside the home directory /root"},
		// A declared path that is, holds or lies in a credential directory
		// is still refused.
		{"/home/ana/.ssh/bin", BindFacts{ReadOnly: true, ReadOnlyPaths: []string{"/home/ana/.ssh/bin"}}, CodeHome, "is inside /home/ana/.ssh, which holds credentials; read-only does not help: keys and tokens are read, not written"},
		{"/home/ana/.config", BindFacts{ReadOnly: true, ReadOnlyPaths: []string{"/home/ana/.config"}}, CodeHome, "contains /home/ana/.config/gcloud, which holds credentials; read-only does not help: keys and tokens are read, not written"},
		{"/root/.aws", BindFacts{Workspaces: []string{"/root/.aws"}}, CodeHome, "is inside the home directory /root"},
		{"/home/ana/.aws", BindFacts{Workspaces: []string{"/home/ana/.aws"}}, CodeHome, "is /home/ana/.aws, which holds credentials"},
		{"/home/ana/.config/yarn/global/node_modules", BindFacts{ReadOnly: true, ReadOnlyPaths: []string{"/home/ana/.config/yarn/global/node_modules"}}, "", ""},
		{"/srv/proj/docker.sock", BindFacts{Workspaces: []string{"/srv/proj"}}, CodeSocket, "is a container engine socket by its name or directory: whoever can write to it is root on the host"},
		// The launcher's own files are exempt from the system class only.
		{"/run/agentbox/r/gateway.sock", BindFacts{ReadOnly: true, RuntimeFiles: []string{"/run/agentbox/r/gateway.sock"}}, "", ""},
		{"/run/agentbox/r/gateway.sock", BindFacts{ReadOnly: true}, CodeSystem, "is inside the system directory /run"},
	}
	for _, tt := range tests {
		tt.f.Homes = homes
		if got := ClassifyBind(tt.p, tt.f); got.Code != tt.code || got.What != tt.what {
			t.Errorf("ClassifyBind(%s, %+v) = %+v, want {%s %s}", tt.p, tt.f, got, tt.code, tt.what)
		}
	}
}

func TestServiceHome(t *testing.T) {
	for h, want := range map[string]bool{
		"/usr/sbin": true, "/run/sshd": true, "/var/lib/postgresql": true, "/bin": true, "/var/run/x": true,
		"/root": false, "/opt/app": false, "/home/ana": false, "/srv/git": false,
	} {
		if got := ServiceHome(h); got != want {
			t.Errorf("ServiceHome(%q) = %v, want %v", h, got, want)
		}
	}
}
