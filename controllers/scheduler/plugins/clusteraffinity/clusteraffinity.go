// Package clusteraffinity filters clusters by the required cluster affinity
// terms of a placement and, for PickN, scores them by the preferred ones.
package clusteraffinity

import (
	"context"
	"fmt"
	"math"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/controllers/scheduler/framework"
)

// Name is the plugin name.
const Name = "ClusterAffinity"

var noTermMatched = framework.Unschedulable("cluster does not match with any of the required cluster affinity terms")

// Plugin implements cluster affinity. Selectors and quantities are parsed
// once per cycle in PreFilter / PreScore and kept in the cycle state.
type Plugin struct{}

var (
	_ framework.PreFilterPlugin = Plugin{}
	_ framework.FilterPlugin    = Plugin{}
	_ framework.PreScorePlugin  = Plugin{}
	_ framework.ScorePlugin     = Plugin{}
)

// New returns the plugin.
func New() Plugin { return Plugin{} }

// Name returns the plugin name.
func (Plugin) Name() string { return Name }

// term is a parsed cluster selector term; its parts are ANDed.
type term struct {
	// labels is nil when the term has no label selector.
	labels       labels.Selector
	requirements []requirement
}

func parseTerm(t *placementv1beta1.ClusterSelectorTerm) (term, error) {
	var out term
	if t.LabelSelector != nil {
		sel, err := metav1.LabelSelectorAsSelector(t.LabelSelector)
		if err != nil {
			return term{}, err
		}
		out.labels = sel
	}
	if t.PropertySelector != nil {
		for _, r := range t.PropertySelector.MatchExpressions {
			req, err := parseRequirement(r)
			if err != nil {
				return term{}, err
			}
			out.requirements = append(out.requirements, req)
		}
	}
	return out, nil
}

func (t *term) matches(mc *clusterv1beta1.MemberCluster) bool {
	if t.labels != nil && !t.labels.Matches(labels.Set(mc.Labels)) {
		return false
	}
	for i := range t.requirements {
		if !t.requirements[i].matches(mc) {
			return false
		}
	}
	return true
}

func affinityOf(policy *placementv1beta1.PlacementPolicy) *placementv1beta1.ClusterAffinity {
	if policy.Affinity == nil {
		return nil
	}
	return policy.Affinity.ClusterAffinity
}

// affinityState is the cluster affinity of a placement, parsed once per cycle.
type affinityState struct {
	required  []term
	preferred []preference
}

const stateKey framework.StateKey = Name

// PreFilter parses the affinity terms (preferred ones only for PickN, the
// only type that scores). PickFixed placements skip the plugin, policies
// without required terms skip the Filter. An invalid term rejects every
// cluster with the parse error, so that the user sees what to fix.
func (p Plugin) PreFilter(_ context.Context, state *framework.CycleState, policy *placementv1beta1.PlacementPolicy) *framework.Status {
	aff := affinityOf(policy)
	if policy.PlacementType == placementv1beta1.PickFixedPlacementType || aff == nil {
		return framework.NewStatus(framework.Skip)
	}
	st, err := parseAffinity(aff, policy.PlacementType == placementv1beta1.PickNPlacementType)
	if err != nil {
		return framework.Unschedulable(err.Error())
	}
	state.Write(stateKey, st)
	if len(st.required) == 0 {
		return framework.NewStatus(framework.Skip)
	}
	return nil
}

func parseAffinity(aff *placementv1beta1.ClusterAffinity, withPreferred bool) (*affinityState, error) {
	st := &affinityState{}
	if req := aff.RequiredDuringSchedulingIgnoredDuringExecution; req != nil {
		for i := range req.ClusterSelectorTerms {
			t, err := parseTerm(&req.ClusterSelectorTerms[i])
			if err != nil {
				return nil, fmt.Errorf("required cluster affinity term %d is invalid: %w", i, err)
			}
			st.required = append(st.required, t)
		}
	}
	if !withPreferred {
		return st, nil
	}
	for i := range aff.PreferredDuringSchedulingIgnoredDuringExecution {
		pref, err := parsePreference(&aff.PreferredDuringSchedulingIgnoredDuringExecution[i])
		if err != nil {
			return nil, fmt.Errorf("preferred cluster affinity term %d is invalid: %w", i, err)
		}
		st.preferred = append(st.preferred, pref)
	}
	return st, nil
}

func readState(state *framework.CycleState) (*affinityState, bool) {
	v, ok := state.Read(stateKey)
	if !ok {
		return nil, false
	}
	return v.(*affinityState), true
}

// Filter rejects clusters that match none of the required terms (ORed).
func (p Plugin) Filter(_ context.Context, state *framework.CycleState, _ *placementv1beta1.PlacementPolicy, cluster *clusterv1beta1.MemberCluster) *framework.Status {
	st, ok := readState(state)
	if !ok {
		return framework.FromError(fmt.Errorf("%s: Filter ran without PreFilter", Name))
	}
	for i := range st.required {
		if st.required[i].matches(cluster) {
			return nil
		}
	}
	return noTermMatched
}

// preference is a parsed preferred term.
type preference struct {
	weight int32
	term
	// sorter, when set, scales the weight by the cluster's property value
	// between min and max among the feasible clusters matching the term.
	sorter   *placementv1beta1.PropertySorter
	property property
	values   map[*clusterv1beta1.MemberCluster]float64
	min, max float64
}

func parsePreference(pt *placementv1beta1.PreferredClusterSelector) (preference, error) {
	t, err := parseTerm(&pt.Preference)
	if err != nil {
		return preference{}, err
	}
	pref := preference{weight: pt.Weight, term: t, sorter: pt.Preference.PropertySorter}
	if pref.sorter != nil {
		if pref.property, err = parseProperty(pref.sorter.Name); err != nil {
			return preference{}, err
		}
	}
	return pref, nil
}

// PreScore collects, for property sorters, the values of the feasible
// clusters that match the term. Policies without preferred terms skip Score.
func (p Plugin) PreScore(_ context.Context, state *framework.CycleState, _ *placementv1beta1.PlacementPolicy, feasible []*clusterv1beta1.MemberCluster) *framework.Status {
	st, ok := readState(state)
	if !ok || len(st.preferred) == 0 {
		return framework.NewStatus(framework.Skip)
	}
	for i := range st.preferred {
		if st.preferred[i].sorter != nil {
			st.preferred[i].observe(feasible)
		}
	}
	return nil
}

func (pref *preference) observe(feasible []*clusterv1beta1.MemberCluster) {
	pref.values = make(map[*clusterv1beta1.MemberCluster]float64, len(feasible))
	pref.min, pref.max = math.Inf(1), math.Inf(-1)
	for _, mc := range feasible {
		if !pref.matches(mc) {
			continue
		}
		q, ok := pref.property.valueOf(mc)
		if !ok {
			continue
		}
		v, ok := sortable(q)
		if !ok {
			continue
		}
		pref.values[mc] = v
		pref.min, pref.max = math.Min(pref.min, v), math.Max(pref.max, v)
	}
}

// sortable is the quantity as a finite float. Quantities beyond float range
// (1e400) earn nothing from a sorter rather than poisoning the min and max;
// a zero with a huge exponent (0e700) is zero, not the NaN the approximation
// gives.
func sortable(q resource.Quantity) (float64, bool) {
	if q.IsZero() {
		return 0, true
	}
	v := q.AsApproximateFloat64()
	return v, !math.IsNaN(v) && !math.IsInf(v, 0)
}

// Score adds up the weights of the matching preferred terms.
func (p Plugin) Score(_ context.Context, state *framework.CycleState, _ *placementv1beta1.PlacementPolicy, cluster *clusterv1beta1.MemberCluster) (framework.ClusterScore, *framework.Status) {
	st, ok := readState(state)
	if !ok {
		return framework.ClusterScore{}, framework.FromError(fmt.Errorf("%s: Score ran without PreFilter", Name))
	}
	var score int32
	for i := range st.preferred {
		score += st.preferred[i].scoreOf(cluster)
	}
	return framework.ClusterScore{AffinityScore: score}, nil
}

func (pref *preference) scoreOf(mc *clusterv1beta1.MemberCluster) int32 {
	if !pref.matches(mc) {
		return 0
	}
	if pref.sorter == nil {
		return pref.weight
	}
	v, ok := pref.values[mc]
	if !ok {
		// A cluster without the property gets nothing from the sorter.
		return 0
	}
	return int32(math.Round(float64(pref.weight) * Fraction(v, pref.min, pref.max, pref.sorter.SortOrder)))
}

// Fraction is the share of a sorter's weight a value earns: linear between
// the observed min and max, favouring large values for Descending and small
// ones for Ascending. When all values are equal every cluster is both the
// best and the worst; each gets the full weight.
func Fraction(v, lo, hi float64, order placementv1beta1.PropertySortOrder) float64 {
	if hi == lo {
		return 1
	}
	f := (v - lo) / (hi - lo)
	if order == placementv1beta1.Ascending {
		return 1 - f
	}
	return f
}
