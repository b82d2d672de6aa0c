package tenancy

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kcp-dev/logicalcluster/v3"
	"k8s.io/apimachinery/pkg/api/resource"

	tenancyv1alpha1 "github.com/fleetplane/fleetplane/apis/tenancy/v1alpha1"
	"github.com/fleetplane/fleetplane/workspaces/usage"
)

// Limits are what one team may keep on the hub.
type Limits struct {
	Objects       int64 `json:"objects"`
	Bytes         int64 `json:"bytes"`
	Placements    int64 `json:"placements"`
	Overrides     int64 `json:"overrides"`
	SnapshotsKept int64 `json:"snapshotsKept"`
}

// DefaultLimits protect a shared hub from one team: no team alone fills
// more than 1/128 of etcd's default 2 GiB with what it writes, and 500
// placements of one team are as many as most fleets' teams have together;
// 20,000 objects leave room for a placement of 10,000 selected objects.
// KubeFleet's seeds keep up to 100 snapshots of a placement.
var DefaultLimits = Limits{Objects: 20000, Bytes: 16 << 20, Placements: 500, Overrides: 500, SnapshotsKept: 100}

// Limits returns the team's limits, from the grants that set limits: those
// naming the team by its path if any, else those naming it by a pattern;
// per limit the highest of them, a limit a grant leaves unset being the
// default. A team no grant sets limits for has the defaults.
func (a *Access) Limits(defaults Limits) Limits {
	setting := a.limiting()
	if len(setting) == 0 {
		return defaults
	}
	var l Limits
	for _, g := range setting {
		l = l.max(defaults.with(g.spec.Limits))
	}
	return l
}

// limiting returns the grants whose limits hold.
func (a *Access) limiting() []grant {
	var exact, pattern []grant
	for _, g := range a.grants {
		switch {
		case g.spec.Limits == nil:
		case g.exact:
			exact = append(exact, g)
		default:
			pattern = append(pattern, g)
		}
	}
	if len(exact) > 0 {
		return exact
	}
	return pattern
}

// with returns l with what set sets.
func (l Limits) with(set *tenancyv1alpha1.TeamLimits) Limits {
	if set == nil {
		return l
	}
	pick := func(v *int64, out *int64) {
		if v != nil {
			*out = *v
		}
	}
	pick32 := func(v *int32, out *int64) {
		if v != nil {
			*out = int64(*v)
		}
	}
	pick(set.Objects, &l.Objects)
	if set.Storage != nil {
		l.Bytes = set.Storage.Value()
	}
	pick32(set.Placements, &l.Placements)
	pick32(set.Overrides, &l.Overrides)
	pick32(set.SnapshotsKept, &l.SnapshotsKept)
	return l
}

func (l Limits) max(o Limits) Limits {
	return Limits{Objects: max(l.Objects, o.Objects), Bytes: max(l.Bytes, o.Bytes), Placements: max(l.Placements, o.Placements),
		Overrides: max(l.Overrides, o.Overrides), SnapshotsKept: max(l.SnapshotsKept, o.SnapshotsKept)}
}

// Team is what the limits of one team workspace are read against.
type Team struct {
	Path   logicalcluster.Path
	Limits Limits
	Used   usage.Usage
	// Grants name the ClusterGrants that set the limits, for messages.
	Grants []string
}

// Exceeded says which limit a request that adds add would go over, or nil.
func (t *Team) Exceeded(add usage.Usage) error {
	for _, c := range []struct {
		field      string
		what       string
		used, plus int64
		limit      int64
	}{
		{"objects", "objects stored on the hub", t.Used.Objects, add.Objects, t.Limits.Objects},
		{"storage", "of storage on the hub", t.Used.Bytes, add.Bytes, t.Limits.Bytes},
		{"placements", "placements", t.Used.Placements, add.Placements, t.Limits.Placements},
		{"overrides", "overrides", t.Used.Overrides, add.Overrides, t.Limits.Overrides},
	} {
		if c.plus > 0 && c.used+c.plus > c.limit {
			amount := func(n int64) string { return fmt.Sprint(n) }
			if c.field == "storage" {
				amount = func(n int64) string { return resource.NewQuantity(n, resource.BinarySI).String() }
			}
			return fmt.Errorf("team %s would go over its limit of %s %s (it has %s, this adds %s): delete what it no longer needs, or ask a platform admin to raise spec.limits.%s of %s",
				t.Path, amount(c.limit), c.what, amount(c.used), amount(c.plus), c.field, t.grantsNamed())
		}
	}
	return nil
}

// SnapshotsKept refuses a placement that asks the hub to keep more
// snapshots than the team may.
func (t *Team) SnapshotsKept(kind, name string, revisionHistoryLimit int64) error {
	if revisionHistoryLimit <= t.Limits.SnapshotsKept {
		return nil
	}
	return fmt.Errorf("%s %s: spec.revisionHistoryLimit %d is over team %s's limit of %d snapshots kept per placement: lower it, or ask a platform admin to raise spec.limits.snapshotsKept of %s",
		kind, name, revisionHistoryLimit, t.Path, t.Limits.SnapshotsKept, t.grantsNamed())
}

func (t *Team) grantsNamed() string {
	if len(t.Grants) == 0 {
		return fmt.Sprintf("a ClusterGrant naming it in %s (the hub's defaults hold: fleet-hub --team-limit-*)", tenancyv1alpha1.FleetWorkspace)
	}
	return fmt.Sprintf("ClusterGrant %s in %s", strings.Join(t.Grants, ", "), tenancyv1alpha1.FleetWorkspace)
}

// grantNames returns the names of the grants whose limits hold.
func (a *Access) grantNames() []string {
	var names []string
	for _, g := range a.limiting() {
		names = append(names, g.name)
	}
	slices.Sort(names)
	return names
}
