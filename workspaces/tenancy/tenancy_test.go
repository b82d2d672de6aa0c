package tenancy

import (
	"context"
	"reflect"
	"slices"
	"testing"

	"github.com/kcp-dev/logicalcluster/v3"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	tenancyv1alpha1 "github.com/fleetplane/fleetplane/apis/tenancy/v1alpha1"
	"github.com/fleetplane/fleetplane/internal/teampolicy"
)

func TestCovers(t *testing.T) {
	tests := []struct {
		patterns []string
		path     string
		children bool
		team     string // "" means not covered
	}{
		{[]string{"root:teams:a"}, "root:teams:a", false, "root:teams:a"},
		{[]string{"root:teams:a"}, "root:teams:ab", false, ""},
		{[]string{"root:teams:a"}, "root:teams:a:sub", false, ""},
		{[]string{"root:teams:a"}, "root:teams:a:sub", true, "root:teams:a"},
		{[]string{"root:teams:a"}, "root:teams:ab:sub", true, ""},
		{[]string{"root:teams:*"}, "root:teams:a", false, "root:teams:a"},
		{[]string{"root:teams:*"}, "root:teams:a:sub", false, ""},
		{[]string{"root:teams:*"}, "root:teams:a:sub:deeper", true, "root:teams:a"},
		{[]string{"root:teams:*"}, "root:teams", true, ""},
		{[]string{"root:teams:*"}, "root:teamsx:a", true, ""},
		{[]string{"root:other", "root:teams:b"}, "root:teams:b", false, "root:teams:b"},
	}
	for _, tc := range tests {
		team, ok := covers(tc.patterns, logicalcluster.NewPath(tc.path), tc.children)
		if ok != (tc.team != "") || team.String() != tc.team {
			t.Errorf("covers(%v, %s, children=%v) = %s, %v; want %q", tc.patterns, tc.path, tc.children, team, ok, tc.team)
		}
	}
}

// A child workspace is covered only by grants that cover children, and its
// team is the workspace the grant names.
func TestChildWorkspaces(t *testing.T) {
	s := runtime.NewScheme()
	if err := tenancyv1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(
		&tenancyv1alpha1.ClusterGrant{ObjectMeta: metav1.ObjectMeta{Name: "all-teams"}, Spec: tenancyv1alpha1.ClusterGrantSpec{Workspaces: []string{"root:teams:*"}}},
		&tenancyv1alpha1.ClusterGrant{ObjectMeta: metav1.ObjectMeta{Name: "a-nested"}, Spec: tenancyv1alpha1.ClusterGrantSpec{Workspaces: []string{"root:teams:a"}, ChildWorkspaces: true}},
	).Build()
	access := func(path string) *Access {
		a, err := (&Grants{Reader: c}).For(context.Background(), logicalcluster.NewPath(path))
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	member := &clusterv1beta1.MemberCluster{}
	if a := access("root:teams:b"); !a.Granted(member) || a.ChildWorkspaces() || a.Team().String() != "root:teams:b" {
		t.Errorf("team b: granted, no children, its own team; got %+v", a)
	}
	if a := access("root:teams:b:sub"); a.Granted(member) || !a.Team().Empty() {
		t.Errorf("a child of team b is covered by no grant; got %+v", a)
	}
	if a := access("root:teams:a"); !a.ChildWorkspaces() || a.Team().String() != "root:teams:a" {
		t.Errorf("team a may have children; got %+v", a)
	}
	if a := access("root:teams:a:sub:deeper"); !a.Granted(member) || !a.ChildWorkspaces() || a.Team().String() != "root:teams:a" {
		t.Errorf("team a's grandchild is team a's; got %+v", a)
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
	platform, err := (&Grants{Reader: c}).For(context.Background(), tenancyv1alpha1.FleetWorkspace)
	if err != nil {
		t.Fatal(err)
	}
	if !platform.Platform() || !platform.Granted(member("dev")) {
		t.Errorf("root:fleet may use every cluster")
	}
}

// A team's limits are, per limit, the highest of the grants naming it by
// path that set limits (those naming it by a pattern hold only where none
// does), a grant that leaves one unset giving the hub's default; a team no
// grant sets limits for has the defaults.
func TestLimits(t *testing.T) {
	s := runtime.NewScheme()
	if err := tenancyv1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	storage := resource.MustParse("8Mi")
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(
		&tenancyv1alpha1.ClusterGrant{ObjectMeta: metav1.ObjectMeta{Name: "small"}, Spec: tenancyv1alpha1.ClusterGrantSpec{
			Workspaces: []string{"root:teams:a"}, Limits: &tenancyv1alpha1.TeamLimits{Objects: ptr.To[int64](50), Storage: &storage, Placements: ptr.To[int32](2)}}},
		&tenancyv1alpha1.ClusterGrant{ObjectMeta: metav1.ObjectMeta{Name: "more-placements"}, Spec: tenancyv1alpha1.ClusterGrantSpec{
			Workspaces: []string{"root:teams:a"}, Limits: &tenancyv1alpha1.TeamLimits{Objects: ptr.To[int64](20), Placements: ptr.To[int32](3), SnapshotsKept: ptr.To[int32](5)}}},
		&tenancyv1alpha1.ClusterGrant{ObjectMeta: metav1.ObjectMeta{Name: "all-teams"}, Spec: tenancyv1alpha1.ClusterGrantSpec{
			Workspaces: []string{"root:teams:*"}, Limits: &tenancyv1alpha1.TeamLimits{Objects: ptr.To[int64](1000)}}},
		&tenancyv1alpha1.ClusterGrant{ObjectMeta: metav1.ObjectMeta{Name: "no-limits"}, Spec: tenancyv1alpha1.ClusterGrantSpec{Workspaces: []string{"root:teams:a"}}},
	).Build()
	defaults := Limits{Objects: 10, Bytes: 1 << 20, Placements: 1, Overrides: 1, SnapshotsKept: 10}
	a, err := (&Grants{Reader: c}).For(context.Background(), logicalcluster.NewPath("root:teams:a"))
	if err != nil {
		t.Fatal(err)
	}
	want := Limits{Objects: 50, Bytes: 8 << 20, Placements: 3, Overrides: 1, SnapshotsKept: 10}
	if got := a.Limits(defaults); got != want {
		t.Errorf("limits %+v, want %+v", got, want)
	}
	if got := a.grantNames(); !slices.Equal(got, []string{"more-placements", "small"}) {
		t.Errorf("grants %v", got)
	}
	b, err := (&Grants{Reader: c}).For(context.Background(), logicalcluster.NewPath("root:teams:b"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := b.Limits(defaults), (Limits{Objects: 1000, Bytes: 1 << 20, Placements: 1, Overrides: 1, SnapshotsKept: 10}); got != want {
		t.Errorf("a team only a pattern names: %+v, want %+v", got, want)
	}
	if got := (&Access{}).Limits(defaults); got != defaults {
		t.Errorf("a team no grant names: %+v, want the defaults", got)
	}
}
