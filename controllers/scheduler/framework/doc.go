// Package framework is Fleetplane's multi-cluster scheduling framework, after
// KubeFleet's. The scheduler controller gathers an Input per placement (its
// latest policy snapshot, all MemberClusters, the placement's bindings, the
// tenant grant) and calls
//
//	func (f *Framework) Schedule(ctx context.Context, in Input) (Result, error)
//
// and persists the Result: new bindings to create (state Scheduled), bindings
// to move to the current snapshot (BindingUpdate; Reschedule restores an
// Unscheduled binding that was picked again), bindings to mark Unscheduled,
// and the decisions and Scheduled condition of the policy snapshot. Schedule
// is a pure function of its input: the same input, in any order, gives the
// same Result, with every list sorted.
//
// # Plugins and profiles
//
// Plugins hook into extension points (see interface.go): PostBatch,
// PreFilter, Filter, PreScore, Score, Reserve and Retain. A Profile lists the
// plugins per extension point; the default one is in package profile. Plugins
// report a Status (nil is Success; Skip, ClusterUnschedulable or
// InternalError) and keep per-cycle data in the CycleState.
//
// # Bindings
//
// Active (Scheduled or Bound) bindings on the current policy snapshot are
// current; those on older snapshots are obsolete. Scheduling terms are
// IgnoredDuringExecution: a current binding is only taken away when its
// cluster is gone or a Retain plugin objects (the cluster is leaving the
// fleet, or the workspace lost its grant) — never because labels, properties
// or taints changed, and never because the cluster is unhealthy or silent:
// health only keeps a cluster from new picks. Obsolete bindings are re-evaluated under the
// current policy: kept (patched) if their cluster is picked again, unscheduled
// otherwise. A second active binding for the same cluster is unscheduled.
//
// # Placement types
//
// PickAll keeps the current bindings and picks every other cluster that
// passes the filters; it is always fulfilled.
//
// PickN keeps the current bindings. With more than N it scales down,
// unscheduling every obsolete binding and the lowest ranked current ones
// (Scheduled before Bound, then by the stored score, then by name). With fewer
// it fills up: filter, score, then pick the best clusters, ranked by topology
// spread score, affinity score, obsolete placement affinity and, on a tie,
// the lexicographically larger name (KubeFleet's documented order). Instead
// of one cluster per cycle as KubeFleet does, the pick loop runs within one
// call: PostBatch caps the batch size, and before every batch the pick-time
// plugins (those registered for Reserve, i.e. topology spread) filter and
// score the remaining candidates again, after Reserve has counted the earlier
// picks. So topology spread constraints hold across the whole result. A PickN
// placement is fulfilled when it has N clusters; otherwise the next cycle
// keeps looking.
//
// PickFixed picks the named clusters that exist and pass the filters (taints
// and affinity do not apply) and unschedules bindings on other clusters; it is
// fulfilled when every named cluster is picked.
//
// # Decisions
//
// Selected clusters come first (with the decision stored on kept bindings,
// else a new one with the scores and reason PickedReason), then the clusters
// that were not selected with the reason: the first rejecting filter, KubeFleet's
// "Specified cluster ... is not found" for PickFixed, or "Cluster ... does not
// score high enough ..." for PickN. At most 1000 decisions are returned.
package framework
