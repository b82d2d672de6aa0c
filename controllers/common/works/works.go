// Package works finds the Works written for a binding in the shard's home
// of Work (root:fleet on a hub of one shard): the work generator writes and
// removes them, the workload report reads what the members said in them.
package works

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/source"
	mchandler "sigs.k8s.io/multicluster-runtime/pkg/handler"
	mcreconcile "sigs.k8s.io/multicluster-runtime/pkg/reconcile"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

// Prefix makes Work names unique across workspaces: the logical cluster
// name, then KubeFleet's {placement} or {namespace}.{placement}.
func Prefix(workspace, namespace, placement string) string {
	if namespace != "" {
		return fmt.Sprintf("%s.%s.%s", workspace, namespace, placement)
	}
	return fmt.Sprintf("%s.%s", workspace, placement)
}

// FirstName names the Work of a binding's first shard.
func FirstName(prefix string) string {
	return fmt.Sprintf(placementv1beta1.FirstWorkNameFmt, prefix)
}

// OriginIndex indexes Works by the binding they were written for (Index),
// all but each binding's first Work, which is read by its name. A member's
// namespace holds a Work for every placement on it; a label selector reads
// them all to find one binding's, which made re-checking every binding
// after a hub restart a fifth of its CPU. Most bindings have their first
// Work only, and an index entry for each (two: in its namespace and in
// all) was ~75 MB of the hub's heap at 100,000 Works.
const OriginIndex = "origin"

// Index adds OriginIndex to the cache of Works in root:fleet. It is called
// before the cache starts.
func Index(ctx context.Context, indexer client.FieldIndexer) error {
	return indexer.IndexField(ctx, &placementv1beta1.Work{}, OriginIndex, func(o client.Object) []string {
		l := o.GetLabels()
		workspace, namespace := l[placementv1beta1.WorkspaceLabel], l[placementv1beta1.ParentNamespaceLabel]
		if workspace == "" || l[placementv1beta1.ParentBindingLabel] == "" ||
			o.GetName() == FirstName(Prefix(workspace, namespace, l[placementv1beta1.PlacementTrackingLabel])) {
			return nil
		}
		return []string{originKey(workspace, namespace, l[placementv1beta1.ParentBindingLabel])}
	})
}

// originKey joins a binding's workspace, namespace (empty for a cluster
// placement's) and name; none of them can hold a "/".
func originKey(workspace, namespace, binding string) string {
	return workspace + "/" + namespace + "/" + binding
}

// MemberNamespace is the namespace of root:fleet holding the Works of the
// binding's cluster.
func MemberNamespace(b placementv1beta1.BindingObj) string {
	return fmt.Sprintf(clusterv1beta1.NamespaceNameFormat, b.GetBindingSpec().TargetCluster)
}

// OfBinding reads, from fleet (root:fleet's cache), the Works written for
// binding b of workspace: its first by name, the others through
// OriginIndex (with opts: client.UnsafeDisableDeepCopy for a reader that
// does not change them).
func OfBinding(ctx context.Context, fleet client.Reader, workspace string, b placementv1beta1.BindingObj, opts ...client.ListOption) ([]placementv1beta1.Work, error) {
	var out []placementv1beta1.Work
	prefix := Prefix(workspace, b.GetNamespace(), b.GetLabels()[placementv1beta1.PlacementTrackingLabel])
	first := &placementv1beta1.Work{}
	err := fleet.Get(ctx, types.NamespacedName{Namespace: MemberNamespace(b), Name: FirstName(prefix)}, first)
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return nil, err
	case WrittenFor(first, workspace, b):
		out = append(out, *first)
	}
	list := &placementv1beta1.WorkList{}
	opts = append(opts, client.InNamespace(MemberNamespace(b)), client.MatchingFields{OriginIndex: originKey(workspace, b.GetNamespace(), b.GetName())})
	if err := fleet.List(ctx, list, opts...); err != nil {
		return nil, err
	}
	return append(out, list.Items...), nil
}

// WrittenFor tells whether w was written for binding b of workspace: a
// Work of the same name may be left by an earlier binding of the placement
// to the cluster.
func WrittenFor(w *placementv1beta1.Work, workspace string, b placementv1beta1.BindingObj) bool {
	l := w.GetLabels()
	return l[placementv1beta1.WorkspaceLabel] == workspace && l[placementv1beta1.ParentNamespaceLabel] == b.GetNamespace() &&
		l[placementv1beta1.ParentBindingLabel] == b.GetName()
}

// Identifier names a manifest of a Work for the placement's status and
// report, with the envelope it came in, if any.
func Identifier(w *placementv1beta1.Work, id placementv1beta1.WorkResourceIdentifier) placementv1beta1.ResourceIdentifier {
	out := placementv1beta1.ResourceIdentifier{Group: id.Group, Version: id.Version, Kind: id.Kind, Namespace: id.Namespace, Name: id.Name}
	if t := w.Labels[placementv1beta1.EnvelopeTypeLabel]; t != "" {
		out.Envelope = &placementv1beta1.EnvelopeIdentifier{Name: w.Labels[placementv1beta1.EnvelopeNameLabel],
			Namespace: w.Labels[placementv1beta1.EnvelopeNamespaceLabel], Type: placementv1beta1.EnvelopeType(t)}
	}
	return out
}

// Source is a controller's watch of the Works in home, the shard's home of
// Work (see the hub's startControllers), for controllers of every
// workspace: handler gets home as the event's cluster.
func Source(home cluster.Cluster, handler mchandler.TypedEventHandlerFunc[client.Object, mcreconcile.Request], predicates ...predicate.Predicate) source.TypedSource[mcreconcile.Request] {
	return source.TypedKind[client.Object, mcreconcile.Request](home.GetCache(), &placementv1beta1.Work{}, handler("", home), predicates...)
}
