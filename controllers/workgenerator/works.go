package workgenerator

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

// syncWorks writes one Work per shard of the binding's resource snapshot
// group and deletes Works of shards that no longer exist. Unchanged Works are
// not written. It returns the binding's Works as they are now.
func (r *Reconciler) syncWorks(ctx context.Context, o origin, t trusted) ([]placementv1beta1.Work, error) {
	existing, err := r.existingWorks(ctx, o)
	if err != nil {
		return nil, err
	}
	byName := map[string]*placementv1beta1.Work{}
	for i := range existing {
		byName[existing[i].Name] = &existing[i]
	}
	var current []placementv1beta1.Work
	for sub, s := range t.group {
		want := o.work(sub, s)
		t.annotate(want)
		got, err := r.apply(ctx, byName[want.Name], want)
		if err != nil {
			return nil, err
		}
		delete(byName, want.Name)
		current = append(current, *got)
	}
	for _, stale := range byName {
		if err := client.IgnoreNotFound(r.Fleet.Delete(ctx, stale)); err != nil {
			return nil, err
		}
	}
	return current, nil
}

// work renders the Work for one shard of the snapshot.
func (o origin) work(sub int, s placementv1beta1.ResourceSnapshotObj) *placementv1beta1.Work {
	name := fmt.Sprintf(placementv1beta1.FirstWorkNameFmt, o.workPrefix())
	if sub > 0 {
		name = fmt.Sprintf(placementv1beta1.WorkNameWithSubindexFmt, o.workPrefix(), sub)
	}
	labels := o.labels()
	labels[placementv1beta1.ParentResourceSnapshotIndexLabel] = s.GetLabels()[placementv1beta1.ResourceIndexLabel]
	w := &placementv1beta1.Work{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: o.memberNamespace(), Labels: labels,
			Annotations: map[string]string{placementv1beta1.ParentResourceSnapshotNameAnnotation: o.binding.GetBindingSpec().ResourceSnapshotName},
		},
	}
	for _, res := range s.GetResourceSnapshotSpec().SelectedResources {
		w.Spec.Workload.Manifests = append(w.Spec.Workload.Manifests, placementv1beta1.Manifest{RawExtension: res.RawExtension})
	}
	if as := o.binding.GetBindingSpec().ApplyStrategy; as != nil {
		w.Spec.ApplyStrategy = as.DeepCopy()
	}
	return w
}

// apply creates the Work or updates it when its spec or labels changed.
func (r *Reconciler) apply(ctx context.Context, existing, want *placementv1beta1.Work) (*placementv1beta1.Work, error) {
	if existing == nil {
		err := r.Fleet.Create(ctx, want)
		if apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("Work %s/%s already exists but belongs to another binding; it is retried (if this lasts, a ClusterResourcePlacement named <namespace>.<name> and a ResourcePlacement <name> in <namespace> of the same workspace share the Work name: rename one of them)", want.Namespace, want.Name)
		}
		return want, err
	}
	if equality.Semantic.DeepEqual(existing.Spec, want.Spec) && contains(existing.Labels, want.Labels) &&
		contains(existing.Annotations, want.Annotations) {
		return existing, nil
	}
	updated := existing.DeepCopy()
	updated.Spec = want.Spec
	updated.Labels = merged(updated.Labels, want.Labels)
	updated.Annotations = merged(updated.Annotations, want.Annotations)
	if err := r.Fleet.Update(ctx, updated); err != nil {
		return nil, err
	}
	return updated, nil
}

// contains tells whether m has every key of want with the same value; the
// server and kcp add their own keys.
func contains(m, want map[string]string) bool {
	for k, v := range want {
		if got, ok := m[k]; !ok || got != v {
			return false
		}
	}
	return true
}

func merged(m, want map[string]string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	for k, v := range want {
		m[k] = v
	}
	return m
}
