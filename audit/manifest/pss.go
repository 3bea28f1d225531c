package manifest

import (
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	psaapi "k8s.io/pod-security-admission/api"
	psa "k8s.io/pod-security-admission/policy"

	. "github.com/agentbox/agentbox/audit"
)

var (
	psaOnce      sync.Once
	psaEvaluator psa.Evaluator
	psaErr       error
)

// EvaluatePodSecurity runs the Pod Security evaluator at restricted,
// latest, on a pod template's metadata and spec.
func EvaluatePodSecurity(labels, annotations map[string]string, spec *corev1.PodSpec) *PodSecurity {
	psaOnce.Do(func() { psaEvaluator, psaErr = psa.NewEvaluator(psa.DefaultChecks(), nil) })
	v := &PodSecurity{Level: string(psaapi.LevelRestricted), Version: psaapi.LatestVersion().String()}
	if psaErr != nil { // the module's own checks failed to register: nothing is allowed
		v.Forbidden = []PodSecurityReason{{Reason: "evaluator unavailable", Detail: psaErr.Error()}}
		return v
	}
	meta := &metav1.ObjectMeta{Labels: labels, Annotations: annotations}
	lv := psaapi.LevelVersion{Level: psaapi.LevelRestricted, Version: psaapi.LatestVersion()}
	agg := psa.AggregateCheckResults(psaEvaluator.EvaluatePod(lv, meta, spec))
	v.Allowed = agg.Allowed
	for i, r := range agg.ForbiddenReasons {
		pr := PodSecurityReason{Reason: r}
		if i < len(agg.ForbiddenDetails) {
			pr.Detail = agg.ForbiddenDetails[i]
		}
		v.Forbidden = append(v.Forbidden, pr)
	}
	return v
}
