package board

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	inventoryv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	tenancyv1alpha1 "github.com/fleetplane/fleetplane/apis/tenancy/v1alpha1"
)

// The states of a placement on a cluster, as the grid colours them.
const (
	StateScheduled  = "scheduled"
	StateRollingOut = "rolling out"
	StateApplied    = "applied"
	StateAvailable  = "available"
	StateFailed     = "failed"
	StateDrifted    = "drifted"
	StateDiffed     = "diffed"
)

// recentEvents is how many events the events pane shows.
const recentEvents = 100

// ClustersView is the fleet map.
type ClustersView struct {
	Clusters []Cluster `json:"clusters"`
	// Source says where the clusters come from: the MemberClusters of
	// root:fleet, the workspace's ClusterProfiles, or, for a team without
	// either, the clusters its placements are on.
	Source string `json:"source"`
}

// PlacementsView is the grid: a row per placement, a column per cluster.
// At 1,000 placements of 100 clusters it holds 100,000 cells, so a cell
// names its cluster and state by their index in Clusters and States.
type PlacementsView struct {
	States     []string  `json:"states"`
	Clusters   []string  `json:"clusters"`
	Placements []GridRow `json:"placements"`
}

// GridRow is a placement in the grid.
type GridRow struct {
	Kind      string     `json:"kind"`
	Namespace string     `json:"namespace,omitempty"`
	Name      string     `json:"name"`
	Policy    string     `json:"policy"`
	State     string     `json:"state"`
	Reason    string     `json:"reason,omitempty"`
	Available int        `json:"available"`
	Cells     []GridCell `json:"cells"`
}

// GridCell is a placement's state on a cluster: [cluster, state] or
// [cluster, state, reason] in JSON.
type GridCell struct {
	Cluster, State int
	Reason         string
}

// MarshalJSON writes the cell as a short array.
func (c GridCell) MarshalJSON() ([]byte, error) {
	out := []byte{'['}
	out = strconv.AppendInt(out, int64(c.Cluster), 10)
	out = append(out, ',')
	out = strconv.AppendInt(out, int64(c.State), 10)
	if c.Reason != "" {
		reason, err := json.Marshal(c.Reason)
		if err != nil {
			return nil, err
		}
		out = append(append(out, ','), reason...)
	}
	return append(out, ']'), nil
}

// cellStates are the grid's states, in the order the page's legend shows them.
var cellStates = []string{StateScheduled, StateRollingOut, StateApplied, StateAvailable, StateFailed, StateDrifted, StateDiffed}

// EventsView is the workspace's newest events.
type EventsView struct {
	Events []Event `json:"events"`
}

// Cluster is a tile of the fleet map.
type Cluster struct {
	Name       string            `json:"name"`
	Health     string            `json:"health"`
	Message    string            `json:"message,omitempty"`
	Labels     map[string]string `json:"labels,omitempty"`
	Properties map[string]string `json:"properties,omitempty"`
	Taints     []string          `json:"taints,omitempty"`
	Grants     []string          `json:"grants,omitempty"`
	Cordoned   bool              `json:"cordoned,omitempty"`
	Leaving    bool              `json:"leaving,omitempty"`
}

// PlacementSummary is a row of the grid: the placement and its state on
// each cluster it is placed on.
type PlacementSummary struct {
	Kind      string          `json:"kind"`
	Namespace string          `json:"namespace,omitempty"`
	Name      string          `json:"name"`
	Policy    string          `json:"policy"`
	Strategy  string          `json:"strategy"`
	State     string          `json:"state"`
	Reason    string          `json:"reason,omitempty"`
	Cells     map[string]Cell `json:"cells"`
	Available int             `json:"available"`
}

// Cell is a placement's state on one cluster, with the why.
type Cell struct {
	State  string `json:"state"`
	Reason string `json:"reason,omitempty"`
}

// Event is a line of the events pane.
type Event struct {
	Type    string    `json:"type"`
	Reason  string    `json:"reason"`
	Object  string    `json:"object"`
	Message string    `json:"message"`
	Count   int32     `json:"count"`
	Time    time.Time `json:"time"`
}

func (w *workspaceWatch) clustersView(ctx context.Context) (*ClustersView, error) {
	// The placements name the clusters only where nothing else does: in
	// root:fleet, summarising 1,000 placements for the map would be waste.
	var placements []PlacementSummary
	var err error
	if !w.sees(&clusterv1beta1.MemberCluster{}) && !w.sees(&inventoryv1alpha1.ClusterProfile{}) {
		if placements, err = w.summaries(ctx); err != nil {
			return nil, err
		}
	}
	v := &ClustersView{}
	v.Clusters, v.Source, err = w.clusters(ctx, placements)
	return v, err
}

func (w *workspaceWatch) placementsView(ctx context.Context) (*PlacementsView, error) {
	placements, err := w.summaries(ctx)
	if err != nil {
		return nil, err
	}
	clusters, _, err := w.clusters(ctx, placements)
	if err != nil {
		return nil, err
	}
	return grid(placements, clusters), nil
}

// grid lays the placements out against the clusters: those of the fleet
// map, and any other a placement is on (a member that left).
func grid(placements []PlacementSummary, clusters []Cluster) *PlacementsView {
	v := &PlacementsView{States: cellStates, Clusters: make([]string, 0, len(clusters)), Placements: make([]GridRow, 0, len(placements))}
	column := map[string]int{}
	columnOf := func(name string) int {
		i, ok := column[name]
		if !ok {
			i = len(v.Clusters)
			column[name] = i
			v.Clusters = append(v.Clusters, name)
		}
		return i
	}
	for _, c := range clusters {
		columnOf(c.Name)
	}
	state := map[string]int{}
	for i, s := range cellStates {
		state[s] = i
	}
	for _, p := range placements {
		row := GridRow{Kind: p.Kind, Namespace: p.Namespace, Name: p.Name, Policy: p.Policy, State: p.State, Reason: p.Reason,
			Available: p.Available, Cells: make([]GridCell, 0, len(p.Cells))}
		for name, cell := range p.Cells {
			row.Cells = append(row.Cells, GridCell{Cluster: columnOf(name), State: state[cell.State], Reason: cell.Reason})
		}
		sort.Slice(row.Cells, func(i, j int) bool { return row.Cells[i].Cluster < row.Cells[j].Cluster })
		v.Placements = append(v.Placements, row)
	}
	return v
}

func (w *workspaceWatch) eventsView(ctx context.Context) (*EventsView, error) {
	events, err := w.events(ctx, nil)
	return &EventsView{Events: events}, err
}

func (w *workspaceWatch) summaries(ctx context.Context) ([]PlacementSummary, error) {
	placements, err := w.placements(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]PlacementSummary, 0, len(placements))
	for _, p := range placements {
		out = append(out, summarize(p))
	}
	return out, nil
}

// placements lists the workspace's ClusterResourcePlacements and
// ResourcePlacements, by kind, namespace and name.
func (w *workspaceWatch) placements(ctx context.Context) ([]placementv1beta1.PlacementObj, error) {
	var crps placementv1beta1.ClusterResourcePlacementList
	if err := w.list(ctx, &placementv1beta1.ClusterResourcePlacement{}, &crps); err != nil {
		return nil, err
	}
	var rps placementv1beta1.ResourcePlacementList
	if err := w.list(ctx, &placementv1beta1.ResourcePlacement{}, &rps); err != nil {
		return nil, err
	}
	out := make([]placementv1beta1.PlacementObj, 0, len(crps.Items)+len(rps.Items))
	for i := range crps.Items {
		out = append(out, &crps.Items[i])
	}
	for i := range rps.Items {
		out = append(out, &rps.Items[i])
	}
	sort.SliceStable(out, func(i, j int) bool {
		return out[i].GetNamespace()+"/"+out[i].GetName() < out[j].GetNamespace()+"/"+out[j].GetName()
	})
	return out, nil
}

func summarize(p placementv1beta1.PlacementObj) PlacementSummary {
	spec, st := p.GetPlacementSpec(), p.GetPlacementStatus()
	kind := placementv1beta1.PlacementKindOf(p)
	s := PlacementSummary{Kind: kind, Namespace: p.GetNamespace(), Name: p.GetName(), Policy: policyOf(spec.Policy),
		Strategy: string(spec.Strategy.Type), Cells: map[string]Cell{}}
	if s.Strategy == "" {
		s.Strategy = string(placementv1beta1.RollingUpdateRolloutStrategyType)
	}
	for _, c := range st.PerClusterPlacementStatuses {
		if c.ClusterName == "" {
			continue
		}
		cell := cellOf(c.Conditions, len(c.FailedPlacements), len(c.DriftedPlacements), len(c.DiffedPlacements))
		if len(c.FailedPlacements) > 0 && cell.State != StateDrifted {
			cell.Reason = failureLine(c.FailedPlacements[0])
		}
		if cell.State == StateAvailable {
			// The reason says nothing more here; at 1,000 placements of
			// 100 clusters it would be most of the grid's bytes.
			s.Available++
			cell.Reason = ""
		}
		s.Cells[c.ClusterName] = cell
	}
	overall := cellOf(trimTypes(st.Conditions, kind), 0, 0, 0)
	s.State, s.Reason = overall.State, overall.Reason
	if p.GetDeletionTimestamp() != nil {
		s.State, s.Reason = "deleting", "the placement is being deleted; what it placed is being removed from its clusters"
	}
	return s
}

func policyOf(p *placementv1beta1.PlacementPolicy) string {
	if p == nil || p.PlacementType == "" {
		return string(placementv1beta1.PickAllPlacementType)
	}
	switch p.PlacementType {
	case placementv1beta1.PickNPlacementType:
		if p.NumberOfClusters != nil {
			return fmt.Sprintf("PickN(%d)", *p.NumberOfClusters)
		}
	case placementv1beta1.PickFixedPlacementType:
		return fmt.Sprintf("PickFixed(%s)", strings.Join(p.ClusterNames, ", "))
	}
	return string(p.PlacementType)
}

// trimTypes returns a placement's conditions with the kind taken off their
// types (ClusterResourcePlacementApplied is Applied), as per-cluster
// conditions are named.
func trimTypes(conds []metav1.Condition, kind string) []metav1.Condition {
	out := make([]metav1.Condition, len(conds))
	for i, c := range conds {
		c.Type = strings.TrimPrefix(c.Type, kind)
		out[i] = c
	}
	return out
}

// cellOf reads the state from the conditions, in the order a rollout
// passes them: the first that is False says where it stopped.
func cellOf(conds []metav1.Condition, failed, drifted, diffed int) Cell {
	get := func(t placementv1beta1.PerClusterPlacementConditionType) *metav1.Condition {
		return meta.FindStatusCondition(conds, string(t))
	}
	if c := get(placementv1beta1.PerClusterScheduledConditionType); c != nil && c.Status == metav1.ConditionFalse {
		return Cell{State: StateFailed, Reason: because(c)}
	}
	for _, t := range []placementv1beta1.PerClusterPlacementConditionType{placementv1beta1.PerClusterOverriddenConditionType,
		placementv1beta1.PerClusterWorkSynchronizedConditionType} {
		if c := get(t); c != nil && c.Status == metav1.ConditionFalse {
			return Cell{State: StateFailed, Reason: because(c)}
		}
	}
	// A drift is named as such even when it stopped the apply (whenToApply
	// IfNotDrifted): that is what someone has to look at.
	if drifted > 0 {
		return Cell{State: StateDrifted, Reason: fmt.Sprintf("%d objects drifted from the hub's manifests", drifted)}
	}
	if c := get(placementv1beta1.PerClusterAppliedConditionType); c != nil && c.Status == metav1.ConditionFalse {
		return Cell{State: StateFailed, Reason: because(c)}
	}
	switch {
	case failed > 0:
		return Cell{State: StateFailed, Reason: fmt.Sprintf("%d objects failed", failed)}
	case diffed > 0:
		return Cell{State: StateDiffed, Reason: fmt.Sprintf("%d objects differ from the hub's manifests", diffed)}
	}
	if c := get(placementv1beta1.PerClusterAvailableConditionType); c != nil {
		if c.Status == metav1.ConditionTrue {
			return Cell{State: StateAvailable, Reason: because(c)}
		}
		return Cell{State: StateApplied, Reason: because(c)}
	}
	if c := get(placementv1beta1.PerClusterAppliedConditionType); c != nil && c.Status == metav1.ConditionTrue {
		return Cell{State: StateApplied, Reason: because(c)}
	}
	if c := get(placementv1beta1.PerClusterDiffReportedConditionType); c != nil && c.Status == metav1.ConditionTrue {
		return Cell{State: StateAvailable, Reason: because(c)}
	}
	if c := get(placementv1beta1.PerClusterRolloutStartedConditionType); c != nil {
		return Cell{State: StateRollingOut, Reason: because(c)}
	}
	if c := get(placementv1beta1.PerClusterScheduledConditionType); c != nil {
		return Cell{State: StateScheduled, Reason: because(c)}
	}
	return Cell{State: StateScheduled, Reason: "waiting for the scheduler"}
}

func because(c *metav1.Condition) string {
	if c.Message == "" {
		return c.Reason
	}
	return c.Reason + ": " + c.Message
}

func failureLine(f placementv1beta1.FailedResourcePlacement) string {
	return fmt.Sprintf("%s: %s", f.Describe(), because(&f.Condition))
}

// clusters are the fleet map's tiles: the MemberClusters where the caller
// sees them (root:fleet), else the workspace's ClusterProfiles, else the
// clusters the workspace's placements are on.
func (w *workspaceWatch) clusters(ctx context.Context, placements []PlacementSummary) ([]Cluster, string, error) {
	if w.sees(&clusterv1beta1.MemberCluster{}) {
		out, err := w.memberClusters(ctx)
		return out, "MemberClusters", err
	}
	if w.sees(&inventoryv1alpha1.ClusterProfile{}) {
		out, err := w.clusterProfiles(ctx)
		return out, "ClusterProfiles", err
	}
	names := map[string]bool{}
	for _, p := range placements {
		for c := range p.Cells {
			names[c] = true
		}
	}
	out := make([]Cluster, 0, len(names))
	for n := range names {
		out = append(out, Cluster{Name: n, Health: "unknown", Message: "bind the cluster inventory API in this workspace to see this cluster's health and properties"})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, "placements", nil
}

func (w *workspaceWatch) memberClusters(ctx context.Context) ([]Cluster, error) {
	var members clusterv1beta1.MemberClusterList
	if err := w.list(ctx, &clusterv1beta1.MemberCluster{}, &members); err != nil {
		return nil, err
	}
	var grants tenancyv1alpha1.ClusterGrantList
	if err := w.list(ctx, &tenancyv1alpha1.ClusterGrant{}, &grants); err != nil {
		return nil, err
	}
	grantsOf := map[string][]string{}
	for _, g := range grants.Items {
		for _, c := range g.Status.Clusters {
			grantsOf[c] = append(grantsOf[c], g.Name)
		}
	}
	out := make([]Cluster, 0, len(members.Items))
	for i := range members.Items {
		m := &members.Items[i]
		c := Cluster{Name: m.Name, Labels: m.Labels, Grants: grantsOf[m.Name], Leaving: m.DeletionTimestamp != nil, Properties: map[string]string{}}
		c.Health, c.Message = memberHealth(m)
		for _, t := range m.Spec.Taints {
			c.Taints = append(c.Taints, fmt.Sprintf("%s=%s:%s", t.Key, t.Value, t.Effect))
			c.Cordoned = c.Cordoned || (t.Key == clusterv1beta1.CordonTaintKey && t.Value == clusterv1beta1.CordonTaintValue)
		}
		for name, v := range m.Status.Properties {
			c.Properties[string(name)] = v.Value
		}
		for name, q := range m.Status.ResourceUsage.Available {
			c.Properties["available "+string(name)] = q.String()
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// memberHealth is joined and heartbeating, or why not. A heartbeat's time
// is left out: it would change every tile every minute, and the health
// says what it means.
func memberHealth(m *clusterv1beta1.MemberCluster) (string, string) {
	for _, a := range m.Status.AgentStatus {
		if c := meta.FindStatusCondition(a.Conditions, clusterv1beta1.AgentHealthy); c != nil && c.Status != metav1.ConditionTrue {
			return "unhealthy", because(c)
		}
	}
	joined := meta.FindStatusCondition(m.Status.Conditions, clusterv1beta1.ConditionTypeMemberClusterJoined)
	switch {
	case joined == nil:
		return "joining", "the member's syncer has not reported yet"
	case joined.Status != metav1.ConditionTrue:
		return "joining", because(joined)
	}
	return "healthy", because(joined)
}

func (w *workspaceWatch) clusterProfiles(ctx context.Context) ([]Cluster, error) {
	var profiles inventoryv1alpha1.ClusterProfileList
	if err := w.list(ctx, &inventoryv1alpha1.ClusterProfile{}, &profiles); err != nil {
		return nil, err
	}
	out := make([]Cluster, 0, len(profiles.Items))
	for _, p := range profiles.Items {
		c := Cluster{Name: p.Name, Labels: p.Labels, Health: "unknown", Properties: map[string]string{}}
		if h := meta.FindStatusCondition(p.Status.Conditions, inventoryv1alpha1.ClusterConditionControlPlaneHealthy); h != nil {
			c.Health, c.Message = "unhealthy", because(h)
			if h.Status == metav1.ConditionTrue {
				c.Health = "healthy"
			}
		}
		for _, prop := range p.Status.Properties {
			c.Properties[prop.Name] = prop.Value
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// events are the workspace's newest events, or those of one object.
func (w *workspaceWatch) events(ctx context.Context, about func(corev1.ObjectReference) bool) ([]Event, error) {
	var list corev1.EventList
	if err := w.list(ctx, &corev1.Event{}, &list); err != nil {
		return nil, err
	}
	out := make([]Event, 0, min(len(list.Items), recentEvents))
	for _, e := range list.Items {
		if about != nil && !about(e.InvolvedObject) {
			continue
		}
		out = append(out, Event{Type: e.Type, Reason: e.Reason, Message: e.Message, Count: max(e.Count, 1), Time: eventTime(&e),
			Object: strings.TrimLeft(e.InvolvedObject.Kind+" "+qualified(e.InvolvedObject.Namespace, e.InvolvedObject.Name), " ")})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time.After(out[j].Time) })
	if len(out) > recentEvents {
		out = out[:recentEvents]
	}
	return out, nil
}

func eventTime(e *corev1.Event) time.Time {
	for _, t := range []time.Time{e.LastTimestamp.Time, e.EventTime.Time, e.FirstTimestamp.Time} {
		if !t.IsZero() {
			return t
		}
	}
	return e.CreationTimestamp.Time
}

func qualified(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}
