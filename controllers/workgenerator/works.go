package workgenerator

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"sort"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/controllers/common/envelopes"
	"github.com/fleetplane/fleetplane/controllers/common/overrides"
	"github.com/fleetplane/fleetplane/controllers/common/works"
	"github.com/fleetplane/fleetplane/internal/manifests"
	"github.com/fleetplane/fleetplane/internal/teampolicy"
)

// overrideFailure is an override that could not be applied: the binding's
// Works are left as they are.
type overrideFailure struct{ error }

func (f overrideFailure) Unwrap() error { return f.error }

// syncWorks writes the binding's Works, with its overrides applied: one per
// shard of its resource snapshot group and one per envelope the snapshot
// holds. It deletes Works that are no longer wanted; unchanged Works are not
// written. It returns the binding's Works as they are now, and whether any
// was created or updated.
func (r *Reconciler) syncWorks(ctx context.Context, o origin, t trusted, ov overrides.Set) ([]placementv1beta1.Work, bool, error) {
	var wanted []*placementv1beta1.Work
	rd := renderer{overrides: ov, cluster: t.cluster, policy: t.policy}
	for sub, s := range t.group {
		ws, err := o.works(sub, s, rd)
		if err != nil {
			return nil, false, err
		}
		for _, w := range ws {
			t.annotate(w)
		}
		wanted = append(wanted, ws...)
	}
	if err := placedOnce(wanted); err != nil {
		return nil, false, err
	}
	existing, err := r.existingWorks(ctx, o)
	if err != nil {
		return nil, false, err
	}
	byName := map[string]*placementv1beta1.Work{}
	for i := range existing {
		byName[existing[i].Name] = &existing[i]
	}
	if err := wantedStillRemoved(wanted, byName); err != nil {
		return nil, false, err
	}
	// An object moves between Works when the shards of a large placement
	// shift: writing the Works that gain manifests first lets the member
	// see where it went before its old Work lets go of it.
	// New Works come first of all, so that a member that sees any Work at
	// the new snapshot sees every new Work.
	rank := make(map[string]int, len(wanted))
	for _, w := range wanted {
		switch existing := byName[w.Name]; {
		case existing == nil:
			rank[w.Name] = 2
		case gains(existing, w):
			rank[w.Name] = 1
		}
	}
	sort.SliceStable(wanted, func(i, j int) bool { return rank[wanted[i].Name] > rank[wanted[j].Name] })
	var current []placementv1beta1.Work
	written := false
	for _, want := range wanted {
		got, wrote, err := r.apply(ctx, byName[want.Name], want)
		if err != nil {
			return nil, false, err
		}
		written = written || wrote
		delete(byName, want.Name)
		current = append(current, *got)
	}
	for _, stale := range byName {
		if !stale.DeletionTimestamp.IsZero() {
			continue
		}
		r.decisions(ctx, o).Info("deleting a Work the binding no longer needs", "work", stale.Name)
		if err := client.IgnoreNotFound(r.Home.GetClient().Delete(ctx, stale)); err != nil {
			return nil, false, err
		}
	}
	return current, written, nil
}

// wantedStillRemoved refuses to write any Work while one that is wanted is
// still being deleted (a shard dropped and wanted again before its member
// let it go). Written over, the member would read the new spec on a Work it
// is letting go of, and the binding's other Works could drop objects that
// then nothing holds, to be deleted and created again. Its removal brings
// the binding back, and the Work is then created afresh.
func wantedStillRemoved(wanted []*placementv1beta1.Work, existing map[string]*placementv1beta1.Work) error {
	for _, w := range wanted {
		if e := existing[w.Name]; e != nil && !e.DeletionTimestamp.IsZero() {
			return fmt.Errorf("the Work %s/%s is still being removed from the member cluster (its syncer lets go of what it placed first); the binding's Works are written once it is gone", e.Namespace, e.Name)
		}
	}
	return nil
}

// works renders the Works of one shard of the snapshot on the cluster: the
// shard's own, and one per envelope in it, which carries the envelope's
// objects (the envelope itself is never applied). A malformed envelope, or
// an object a team may not place, is an error naming the envelope and its
// entry; an override that cannot apply, an overrideFailure.
func (o origin) works(sub int, s placementv1beta1.ResourceSnapshotObj, rd renderer) ([]*placementv1beta1.Work, error) {
	name := works.FirstName(o.workPrefix())
	if sub > 0 {
		name = fmt.Sprintf(placementv1beta1.WorkNameWithSubindexFmt, o.workPrefix(), sub)
	}
	shard := o.newWork(name, s)
	out := []*placementv1beta1.Work{shard}
	for _, res := range s.GetResourceSnapshotSpec().SelectedResources {
		env, err := envelopes.Open(res.Raw)
		if err != nil {
			return nil, err
		}
		if env == nil {
			if err := rd.add(shard, res.Raw, "the resource selectors"); err != nil {
				return nil, err
			}
			continue
		}
		w := o.newWork(fmt.Sprintf(placementv1beta1.WorkNameWithEnvelopeFmt, o.workPrefix(), envelopeSuffix(env.ID)), s)
		w.Labels[placementv1beta1.EnvelopeTypeLabel] = string(env.ID.Type)
		w.Labels[placementv1beta1.EnvelopeNameLabel] = env.ID.Name
		w.Labels[placementv1beta1.EnvelopeNamespaceLabel] = env.ID.Namespace
		for i, obj := range env.Objects {
			if err := rd.add(w, obj, env.Entry(i)); err != nil {
				return nil, err
			}
		}
		out = append(out, w)
	}
	return out, nil
}

// gains tells whether want holds a manifest the existing Work does not.
func gains(existing, want *placementv1beta1.Work) bool {
	had := make(map[string]bool, len(existing.Spec.Workload.Manifests))
	for _, m := range existing.Spec.Workload.Manifests {
		had[string(m.Raw)] = true
	}
	for _, m := range want.Spec.Workload.Manifests {
		if !had[string(m.Raw)] {
			return true
		}
	}
	return false
}

// placedOnce fails when two manifests of the binding's Works are the same
// object (selected directly and in an envelope, or twice in envelopes):
// the member could apply only one of them. A manifest without a name
// (generateName alone) is no object yet: the member reports it.
func placedOnce(works []*placementv1beta1.Work) error {
	from := map[placementv1beta1.ResourceIdentifier]string{}
	for _, w := range works {
		source := "the resource selectors"
		if name := w.Labels[placementv1beta1.EnvelopeNameLabel]; name != "" {
			source = fmt.Sprintf("%s %s", w.Labels[placementv1beta1.EnvelopeTypeLabel], path.Join(w.Labels[placementv1beta1.EnvelopeNamespaceLabel], name))
		}
		for _, m := range w.Spec.Workload.Manifests {
			id, err := overrides.Identify(m.Raw)
			if err != nil {
				return err
			}
			if id.Name == "" {
				continue
			}
			id.Version = ""
			if first, dup := from[id]; dup {
				return fmt.Errorf("%s %s is placed twice, by %s and by %s; a placement may place an object once: remove one of them",
					id.Kind, path.Join(id.Namespace, id.Name), first, source)
			}
			from[id] = source
		}
	}
	return nil
}

// envelopeSuffix names an envelope's Work after the envelope, so that it
// keeps its name from one snapshot to the next.
func envelopeSuffix(id placementv1beta1.EnvelopeIdentifier) string {
	sum := sha256.Sum256([]byte(string(id.Type) + "/" + id.Namespace + "/" + id.Name))
	return hex.EncodeToString(sum[:])[:12]
}

func (o origin) newWork(name string, s placementv1beta1.ResourceSnapshotObj) *placementv1beta1.Work {
	labels := o.labels()
	labels[placementv1beta1.ParentResourceSnapshotIndexLabel] = s.GetLabels()[placementv1beta1.ResourceIndexLabel]
	w := &placementv1beta1.Work{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: o.memberNamespace(), Labels: labels,
			Annotations: map[string]string{placementv1beta1.ParentResourceSnapshotNameAnnotation: o.binding.GetBindingSpec().ResourceSnapshotName},
		},
	}
	if as := o.binding.GetBindingSpec().ApplyStrategy; as != nil {
		w.Spec.ApplyStrategy = as.DeepCopy()
	}
	return w
}

// renderer renders manifests for one cluster: the overrides applied, then,
// for a team workspace, its policy checked on the exact bytes the member
// will receive.
type renderer struct {
	overrides overrides.Set
	cluster   overrides.Cluster
	// policy is nil for the platform workspace.
	policy *teampolicy.Policy
}

// add appends a manifest to a Work with the overrides applied; a Delete
// override leaves it out. from names where the manifest comes from: the
// resource selectors, or an envelope's entry.
func (rd renderer) add(w *placementv1beta1.Work, raw []byte, from string) error {
	if !rd.overrides.Empty() {
		var err error
		if raw, err = rd.overrides.Apply(raw, rd.cluster); err != nil {
			return overrideFailure{err}
		}
		if raw == nil {
			return nil
		}
	}
	head, err := manifests.ReadHead(raw)
	if err != nil {
		return fmt.Errorf("an object placed by %s cannot go to member cluster %s: %w", from, rd.cluster.Name, err)
	}
	if rd.policy != nil {
		gk := head.GroupVersionKind().GroupKind()
		if refusal := rd.policy.CheckObject(gk, head.Namespace, head.Name, teampolicy.ClusterScoped(gk, head.Namespace)); refusal != nil {
			return fmt.Errorf("%s, on member cluster %s: %w", from, rd.cluster.Name, refusal)
		}
	}
	w.Spec.Workload.Manifests = append(w.Spec.Workload.Manifests, placementv1beta1.Manifest{RawExtension: runtime.RawExtension{Raw: raw}})
	return nil
}

// apply creates the Work or updates it when its spec or labels changed, and
// tells whether it wrote it.
func (r *Reconciler) apply(ctx context.Context, existing, want *placementv1beta1.Work) (*placementv1beta1.Work, bool, error) {
	if existing == nil {
		err := r.Home.GetClient().Create(ctx, want)
		if apierrors.IsAlreadyExists(err) {
			return nil, false, r.nameTaken(ctx, want)
		}
		return want, err == nil, err
	}
	if equality.Semantic.DeepEqual(existing.Spec, want.Spec) && contains(existing.Labels, want.Labels) &&
		contains(existing.Annotations, want.Annotations) {
		return existing, false, nil
	}
	updated := existing.DeepCopy()
	updated.Spec = want.Spec
	updated.Labels = merged(updated.Labels, want.Labels)
	updated.Annotations = merged(updated.Annotations, want.Annotations)
	if err := r.Home.GetClient().Update(ctx, updated); err != nil {
		return nil, false, err
	}
	return updated, true, nil
}

// nameTaken says why a Work could not be created under its name: mostly
// because the Work of an earlier binding of the same placement to the same
// cluster is still being removed (the cluster was picked again meanwhile;
// its removal brings this binding back), else a name clash.
func (r *Reconciler) nameTaken(ctx context.Context, want *placementv1beta1.Work) error {
	got := &placementv1beta1.Work{}
	err := r.Home.GetClient().Get(ctx, client.ObjectKeyFromObject(want), got)
	earlier := got.Labels[placementv1beta1.ParentBindingLabel]
	switch {
	case err != nil:
	case samePlacement(got, want) && earlier != want.Labels[placementv1beta1.ParentBindingLabel]:
		return fmt.Errorf("the Work %s/%s of an earlier binding (%s) of this placement to the cluster is still being removed (its syncer lets go of what it placed first); this binding's Work is written once it is gone",
			want.Namespace, want.Name, earlier)
	case samePlacement(got, want):
		// The binding's own, written a moment ago: the cache is behind.
		return fmt.Errorf("the Work %s/%s was written a moment ago and is read again", want.Namespace, want.Name)
	}
	return fmt.Errorf("the Work %s/%s already exists but belongs to another binding; it is retried (if this lasts, a ClusterResourcePlacement named <namespace>.<name> and a ResourcePlacement <name> in <namespace> of the same workspace share the Work name: rename one of them)", want.Namespace, want.Name)
}

// samePlacement tells whether two Works were written for the same placement.
func samePlacement(a, b *placementv1beta1.Work) bool {
	for _, l := range []string{placementv1beta1.WorkspaceLabel, placementv1beta1.PlacementTrackingLabel, placementv1beta1.ParentNamespaceLabel} {
		if a.Labels[l] != b.Labels[l] {
			return false
		}
	}
	return true
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
