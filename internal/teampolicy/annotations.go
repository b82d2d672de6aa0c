package teampolicy

import (
	"strings"

	psapi "k8s.io/pod-security-admission/api"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

// Annotations are what the hub records on a team's Work for the member's
// syncer, which holds the Work to them again before it writes.
func (p Policy) Annotations() map[string]string {
	a := map[string]string{
		placementv1beta1.TenantAnnotation:             "true",
		placementv1beta1.TakeOverNamespacesAnnotation: strings.Join(p.TakeOverNamespaces, ","),
		placementv1beta1.ReservedNamespacesAnnotation: strings.Join(p.ReservedNamespaces, ","),
		placementv1beta1.PodSecurityAnnotation:        string(p.podSecurity()),
	}
	if p.CustomResourceDefinitions {
		a[placementv1beta1.AllowCustomResourceDefinitionsAnnotation] = "true"
	}
	return a
}

// FromAnnotations reads the policy of a Work, and whether it is a team's
// (the platform's Works carry none). A level the syncer cannot read is
// taken as the strictest.
func FromAnnotations(a map[string]string) (Policy, bool) {
	if a[placementv1beta1.TenantAnnotation] != "true" {
		return Policy{}, false
	}
	p := Policy{
		TakeOverNamespaces:        split(a[placementv1beta1.TakeOverNamespacesAnnotation]),
		ReservedNamespaces:        split(a[placementv1beta1.ReservedNamespacesAnnotation]),
		CustomResourceDefinitions: a[placementv1beta1.AllowCustomResourceDefinitionsAnnotation] == "true",
		PodSecurity:               DefaultPodSecurity,
	}
	if level, ok := a[placementv1beta1.PodSecurityAnnotation]; ok {
		parsed, err := psapi.ParseLevel(level)
		if err != nil {
			parsed = LevelRestricted
		}
		p.PodSecurity = parsed
	}
	return p, true
}

func (p Policy) podSecurity() Level {
	if p.PodSecurity == "" {
		return DefaultPodSecurity
	}
	return p.PodSecurity
}

func split(list string) []string {
	if list == "" {
		return nil
	}
	return strings.Split(list, ",")
}
