package tenancy

import (
	"context"
	"reflect"
	"testing"

	"github.com/kcp-dev/logicalcluster/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	tenancyv1alpha1 "github.com/fleetplane/fleetplane/apis/tenancy/v1alpha1"
	"github.com/fleetplane/fleetplane/internal/teampolicy"
)

func TestCovers(t *testing.T) {
	tests := []struct {
		patterns []string
		path     string
		want     bool
	}{
		{[]string{"root:teams:a"}, "root:teams:a", true},
		{[]string{"root:teams:a"}, "root:teams:ab", false},
		{[]string{"root:teams:*"}, "root:teams:a", true},
		{[]string{"root:teams:*"}, "root:teams:a:sub", true},
		{[]string{"root:teams:*"}, "root:teams", false},
		{[]string{"root:teams:*"}, "root:teamsx:a", false},
		{[]string{"root:other", "root:teams:b"}, "root:teams:b", true},
	}
	for _, tc := range tests {
		if got := Covers(tc.patterns, logicalcluster.NewPath(tc.path)); got != tc.want {
			t.Errorf("Covers(%v, %s) = %v, want %v", tc.patterns, tc.path, got, tc.want)
		}
	}
}

func TestAccess(t *testing.T) {
	s := runtime.NewScheme()
	if err := tenancyv1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	grant := func(name string, ws []string, sel map[string]string, takeOver []string, crds bool, podSecurity string) *tenancyv1alpha1.ClusterGrant {
		return &tenancyv1alpha1.ClusterGrant{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: tenancyv1alpha1.ClusterGrantSpec{
			Workspaces: ws, ClusterSelector: &metav1.LabelSelector{MatchLabels: sel}, TakeOverNamespaces: takeOver, AllowCustomResourceDefinitions: crds,
			PodSecurity: podSecurity}}
	}
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(
		grant("canary", []string{"root:teams:a"}, map[string]string{"env": "canary"}, []string{"legacy-*"}, true, "restricted"),
		grant("prod", []string{"root:teams:*"}, map[string]string{"env": "prod"}, []string{"old", "legacy-*"}, false, ""),
		grant("prod-privileged", []string{"root:teams:a"}, map[string]string{"env": "prod"}, nil, false, "privileged"),
		grant("other", []string{"root:teams:b"}, nil, []string{"b-*"}, true, "privileged"),
	).Build()
	member := func(env string) *clusterv1beta1.MemberCluster {
		return &clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"env": env}}}
	}
	a, err := (&Grants{Reader: c}).For(context.Background(), logicalcluster.NewPath("root:teams:a"))
	if err != nil {
		t.Fatal(err)
	}
	if a.Platform() || !a.Granted(member("canary")) || !a.Granted(member("prod")) || a.Granted(member("dev")) {
		t.Errorf("team a is granted canary and prod only")
	}
	if got := a.Policy(member("canary")); !got.CustomResourceDefinitions || !reflect.DeepEqual(got.TakeOverNamespaces, []string{"legacy-*"}) ||
		got.PodSecurity != teampolicy.LevelRestricted {
		t.Errorf("policy on canary = %+v", got)
	}
	if got := a.Policy(member("prod")); got.CustomResourceDefinitions || !reflect.DeepEqual(got.TakeOverNamespaces, []string{"legacy-*", "old"}) ||
		got.PodSecurity != teampolicy.LevelPrivileged {
		t.Errorf("policy on prod (the loosest level of two grants) = %+v", got)
	}
	if got := a.Policy(member("dev")); got.CustomResourceDefinitions || len(got.TakeOverNamespaces) != 0 || got.PodSecurity != teampolicy.LevelBaseline {
		t.Errorf("policy on an ungranted cluster = %+v", got)
	}
	c2, err := (&Grants{Reader: c}).For(context.Background(), logicalcluster.NewPath("root:teams:c"))
	if err != nil {
		t.Fatal(err)
	}
	if got := c2.Policy(member("prod")); got.PodSecurity != teampolicy.LevelBaseline {
		t.Errorf("a grant without podSecurity gives baseline, got %+v", got)
	}
	platform, err := (&Grants{Reader: c}).For(context.Background(), PlatformPath)
	if err != nil {
		t.Fatal(err)
	}
	if !platform.Platform() || !platform.Granted(member("dev")) {
		t.Errorf("root:fleet may use every cluster")
	}
}
