package advisory

import "testing"

func TestCompareDeb(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"1.1.5+ds1-1+deb12u1", "1.1.5+ds1-1", 1},
		{"1.1.5+ds1-1+deb12u1", "1.1.5+ds1-1+deb12u1", 0},
		{"1.1.5+ds1-1+deb12u1", "1.1.5+ds1-1+deb12u2", -1},
		{"1.1.5+ds1-1+b1", "1.1.5+ds1-1+deb12u1", -1}, // b < d
		{"1.0.0~rc93+ds1-5+deb11u3", "1.0.0+ds1-1", -1},
		{"1.0~rc1", "1.0", -1},
		{"1.0~rc1", "1.0~", 1},
		{"1:0.9-1", "2.0-1", 1},
		{"1.10-1", "1.9-1", 1},
		{"1.8.1-1+deb12u1", "1.8.1-1", 1},
		{"1.1.12-0ubuntu3.1", "1.1.12-0ubuntu3", 1},
		{"1.2.5-0ubuntu1~24.04.1", "1.2.5-0ubuntu1", -1},
		{"2.0", "2.0-0", 0},
	} {
		if got := compareDeb(tc.a, tc.b); got != tc.want {
			t.Errorf("compareDeb(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := compareDeb(tc.b, tc.a); got != -tc.want {
			t.Errorf("compareDeb(%q, %q) = %d, want %d", tc.b, tc.a, got, -tc.want)
		}
	}
}

func TestCompareRPM(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"1.1.12-1.fc39", "1.1.12-1.fc39", 0},
		{"2:1.1.12-1.fc39", "1.3.3-1.fc43", 1},
		{"1.1.12-2.fc39", "1.1.12-1.fc39", 1},
		{"1.10-1", "1.9-1", 1},
		{"1.0~rc1-1", "1.0-1", -1},
		{"1.0^git1-1", "1.0-1", 1},
		{"1.0^git1-1", "1.0.1-1", -1},
		{"1.0a-1", "1.0-1", 1},
		{"1.0a-1", "1.0.1-1", -1}, // digits beat letters
		{"1.28-1.fc43", "1.8.1-1.fc38", 1},
	} {
		if got := compareRPM(tc.a, tc.b); got != tc.want {
			t.Errorf("compareRPM(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := compareRPM(tc.b, tc.a); got != -tc.want {
			t.Errorf("compareRPM(%q, %q) = %d, want %d", tc.b, tc.a, got, -tc.want)
		}
	}
}

func TestCompareUpstream(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"1.0.0-rc93", "1.0.0-rc7", 1},
		{"1.0.0-rc6", "1.0.0-rc7", -1},
		{"1.0.0", "1.0.0-rc95", 1},
		{"1.4.0-rc.3", "1.4.0-rc.2", 1},
		{"1.4.0", "1.4.0-rc.3", 1},
		{"1.1.5+ds1", "1.1.5", 0},
		{"1.1.12", "1.1.5", 1},
		{"v1.2.8", "1.2.8", 0},
		{"1.25.1", "1.25", 1},
		{"0.4", "1.8.1", -1},
		{"1.0.0~rc93", "1.0.0-rc93", 0},
	} {
		a, okA := parseUpstream(tc.a)
		b, okB := parseUpstream(tc.b)
		if !okA || !okB {
			t.Fatalf("parseUpstream(%q, %q) failed", tc.a, tc.b)
		}
		if got := compareUpstream(a, b); got != tc.want {
			t.Errorf("compareUpstream(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
	if _, ok := parseUpstream("release-20240513.0"); ok {
		t.Error("parseUpstream accepted a runsc release name")
	}
}

func TestPackageUpstream(t *testing.T) {
	for in, want := range map[string]string{
		"1.1.5+ds1-1+deb12u1":      "1.1.5",
		"1.0.0~rc93+ds1-5+deb11u3": "1.0.0~rc93",
		"2:1.1.12-1.fc39":          "1.1.12",
		"1.1.12-0ubuntu3.1":        "1.1.12",
		"1.8.1-1+deb12u1":          "1.8.1",
	} {
		if got := packageUpstream(in); got != want {
			t.Errorf("packageUpstream(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestAtLeast(t *testing.T) {
	for _, tc := range []struct {
		v, min string
		want   bool
	}{
		{"1.8.1", "0.17", true},
		{"0.17", "0.17", true},
		{"0.16.2", "0.17", false},
		{"1.1.5+ds1", "1.1.5", true},
		{"1.2.0-rc.1", "1.2.0", false},
		{"", "0.17", false},
		{"unknown", "0.17", false},
	} {
		if got := AtLeast(tc.v, tc.min); got != tc.want {
			t.Errorf("AtLeast(%q, %q) = %v, want %v", tc.v, tc.min, got, tc.want)
		}
	}
}
