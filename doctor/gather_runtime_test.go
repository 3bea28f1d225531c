package doctor

import (
	"context"
	"testing"
)

// The runtime's own package is asked first (dpkg-query -L and
// dpkg-divert); dpkg-query -S settles what that does not.
func TestOwningPackage(t *testing.T) {
	base := map[string]string{
		"dpkg-query -W -f ${Version} runc":      "1.1.5+ds1-1+deb12u1",
		"dpkg-query -W -f ${Version} runc-fork": "1.2.8-1",
	}
	for _, tc := range []struct {
		name     string
		commands map[string]string
		want     string // package name, "" for none
	}{
		{"listed by its namesake", map[string]string{"dpkg-query -L runc": "/.\n/usr\n/usr/sbin\n/usr/sbin/runc\n", "dpkg-divert --listpackage /usr/sbin/runc": ""}, "runc"},
		{"diverted: dpkg-query -S decides", map[string]string{
			"dpkg-query -L runc": "/usr/sbin/runc\n", "dpkg-divert --listpackage /usr/sbin/runc": "runc-fork\n",
			"dpkg-query -S /usr/sbin/runc": "runc-fork: /usr/sbin/runc\n",
		}, "runc-fork"},
		{"not the namesake's file", map[string]string{"dpkg-query -L runc": "/usr/bin/runc\n", "dpkg-query -S /usr/sbin/runc": "runc-fork: /usr/sbin/runc\n"}, "runc-fork"},
		{"no package", map[string]string{"dpkg-query -L runc": "/usr/bin/runc\n", "dpkg-divert --listpackage /usr/sbin/runc": ""}, ""},
	} {
		fx := &fixtureHost{Path: map[string]string{"dpkg-query": "/usr/bin/dpkg-query", "dpkg-divert": "/usr/bin/dpkg-divert"}, Commands: map[string]string{}}
		for k, v := range base {
			fx.Commands[k] = v
		}
		for k, v := range tc.commands {
			fx.Commands[k] = v
		}
		pkg := owningPackage(context.Background(), Host{Root: t.TempDir(), Sys: fx}, "runc", "/usr/sbin/runc")
		switch {
		case tc.want == "" && pkg != nil:
			t.Errorf("%s: %+v, want no package", tc.name, pkg)
		case tc.want != "" && (pkg == nil || pkg.Name != tc.want):
			t.Errorf("%s: %+v, want package %s", tc.name, pkg, tc.want)
		}
	}
}
