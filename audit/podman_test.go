package audit

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// podmanInspect is `podman inspect` output (podman 4.3) cut to what the
// audit reads: HostConfig.CapAdd/CapDrop as podman computes them against
// its own comparison list, and the resulting sets.
func podmanInspect(capAdd, capDrop, effective string) []byte {
	return []byte(fmt.Sprintf(`[{"Id":"c1998dd5b173","Name":"hx","Config":{"User":"1000:1000","Image":"localhost/agentbox-test/busybox:latest"},
		"HostConfig":{"NetworkMode":"none","CapAdd":[%s],"CapDrop":[%s],"SecurityOpt":["no-new-privileges"],"ReadonlyRootfs":true,"Memory":67108864,"PidsLimit":64},
		"EffectiveCaps":[%[3]s],"BoundingCaps":[%[3]s]}]`, capAdd, capDrop, effective))
}

// TestPodmanCapsAgainstPodmansDefaults: Podman's inspect output carries the
// resulting sets, held to Podman's default set. `--cap-drop ALL --cap-add
// NET_RAW` shows no CapAdd (podman 4.3's comparison list holds NET_RAW),
// yet NET_RAW is beyond Podman's defaults: added.
func TestPodmanCapsAgainstPodmansDefaults(t *testing.T) {
	all13 := `"CAP_AUDIT_WRITE","CAP_CHOWN","CAP_DAC_OVERRIDE","CAP_FOWNER","CAP_FSETID","CAP_KILL","CAP_MKNOD","CAP_NET_BIND_SERVICE","CAP_SETFCAP","CAP_SETGID","CAP_SETPCAP","CAP_SETUID","CAP_SYS_CHROOT"`
	quoted := make([]string, len(PodmanDefaultCaps))
	for i, c := range PodmanDefaultCaps {
		quoted[i] = strconv.Quote(c)
	}
	defaults := strings.Join(quoted, ",")
	tests := []struct {
		name, add, drop, effective string
		want                       []string
	}{
		{"net_raw back after drop ALL", ``, all13, `"CAP_NET_RAW"`, []string{CodeCapsAdded + " high"}},
		{"podman's defaults", ``, `"CAP_AUDIT_WRITE","CAP_MKNOD"`, defaults, []string{CodeCapsNotDropped + " medium"}},
		{"nothing", ``, all13, ``, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cs, err := ParseInspect(podmanInspect(tc.add, tc.drop, tc.effective), "inspect")
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range Audit(cs, Options{}).Containers[0].Findings {
				if f.Code == CodeCapsAdded || f.Code == CodeCapsNotDropped {
					got = append(got, f.Code+" "+string(f.Severity))
				}
			}
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("capability findings %v, want %v", got, tc.want)
			}
		})
	}
}
