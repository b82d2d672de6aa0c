package workloadreport

import (
	"context"
	"fmt"

	"github.com/kcp-dev/logicalcluster/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

// warned is a member's warning about one placed object on one cluster.
type warned struct {
	object  placementv1beta1.ResourceIdentifier
	cluster string
	warning placementv1beta1.MemberWarning
}

// newWarnings are the warnings next reports that prev did not.
func newWarnings(prev, next *placementv1beta1.WorkloadReportStatus) []warned {
	seen := map[string]bool{}
	for _, o := range prev.Objects {
		for _, c := range o.Clusters {
			for _, w := range c.Warnings {
				seen[warningKey(o.ResourceIdentifier, c.ClusterName, w)] = true
			}
		}
	}
	var out []warned
	for _, o := range next.Objects {
		for _, c := range o.Clusters {
			for _, w := range c.Warnings {
				if !seen[warningKey(o.ResourceIdentifier, c.ClusterName, w)] {
					out = append(out, warned{object: o.ResourceIdentifier, cluster: c.ClusterName, warning: w})
				}
			}
		}
	}
	return out
}

func warningKey(id placementv1beta1.ResourceIdentifier, cluster string, w placementv1beta1.MemberWarning) string {
	return keyOf(id) + "|" + cluster + "|" + w.Reason + "|" + w.Message
}

// announce records each new warning as a Warning event in the placement's
// workspace, on the object it concerns there (so that kubectl describe
// shows it), or on the placement for an object that has none (an
// enveloped one). The workspace's event recorder aggregates repeats and
// limits how many events one object gets.
func (r *Reconciler) announce(ctx context.Context, workspace string, p placementv1beta1.PlacementObj, list []warned) {
	if len(list) == 0 {
		return
	}
	ws, err := r.Workspaces.For(logicalcluster.Name(workspace))
	if err != nil {
		log.FromContext(ctx).Error(err, "the workspace of a placement whose clusters reported warnings", "workspace", workspace)
		return
	}
	recorder := ws.Recorder(ws.Client.Scheme(), ControllerName)
	for _, w := range list {
		var about runtime.Object = p
		if w.object.Envelope == nil {
			if obj, err := original(ctx, ws.Client, w.object); err == nil {
				about = obj
			}
		}
		recorder.Eventf(about, corev1.EventTypeWarning, w.warning.Reason, "cluster %s: %s", w.cluster, describeWarning(w))
	}
}

func describeWarning(w warned) string {
	if w.warning.Object == "" || w.warning.Object == w.object.Kind+" "+w.object.Name {
		return w.warning.Message
	}
	return fmt.Sprintf("%s: %s", w.warning.Object, w.warning.Message)
}

// original reads the metadata of the workspace's object id names.
func original(ctx context.Context, c client.Reader, id placementv1beta1.ResourceIdentifier) (*metav1.PartialObjectMetadata, error) {
	obj := &metav1.PartialObjectMetadata{}
	obj.SetGroupVersionKind(schema.GroupVersionKind{Group: id.Group, Version: id.Version, Kind: id.Kind})
	if err := c.Get(ctx, client.ObjectKey{Namespace: id.Namespace, Name: id.Name}, obj); err != nil {
		return nil, err
	}
	return obj, nil
}
