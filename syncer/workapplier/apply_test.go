package workapplier

import (
	"context"
	"errors"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

// A new object is created on a miss in a synced cache without a read from
// the API server; an object the cache has not seen yet is never written
// over: the create (or the server-side apply, which only creates) fails and
// the object is read and judged as the existing one it is — here another
// placement's, which is not taken over.
func TestApplyOnACacheMiss(t *testing.T) {
	platform := ownerOf(&placementv1beta1.Work{ObjectMeta: metav1.ObjectMeta{Name: "p",
		Labels: map[string]string{placementv1beta1.WorkspaceLabel: "fleet", placementv1beta1.PlacementTrackingLabel: "p"}}})
	others := func() []client.Object {
		return []client.Object{object("ConfigMap", "app", "settings", map[string]string{placementv1beta1.OwnerAnnotation: "fleet/other"})}
	}
	tests := []struct {
		name     string
		strategy placementv1beta1.ApplyStrategyType
		onMember []client.Object
		unsynced bool
		big      bool
		// refuseCreate makes the member refuse creates as a quota would,
		// before it checks whether the object exists.
		refuseCreate bool
		// createdBeforeTheApply has someone create onMember's object just
		// before the first server-side apply reaches the member.
		createdBeforeTheApply bool
		wantReads             int
		wantReason            string
	}{
		{name: "a new object is created without a read", strategy: placementv1beta1.ApplyStrategyTypeClientSideApply, wantReason: placementv1beta1.ApplyResultApplied},
		{name: "a kind not synced yet is read first", strategy: placementv1beta1.ApplyStrategyTypeClientSideApply, unsynced: true, wantReads: 1, wantReason: placementv1beta1.ApplyResultApplied},
		{name: "an object the cache has not seen: the create fails and it is read", strategy: placementv1beta1.ApplyStrategyTypeClientSideApply, onMember: others(), wantReads: 1, wantReason: placementv1beta1.ApplyResultFailedToTakeOver},
		{name: "too big for client-side apply: applied only if absent, and read when it is not", strategy: placementv1beta1.ApplyStrategyTypeClientSideApply, onMember: others(), big: true, wantReads: 1, wantReason: placementv1beta1.ApplyResultFailedToTakeOver},
		{name: "a create refused for another reason: read and judged too", strategy: placementv1beta1.ApplyStrategyTypeClientSideApply, onMember: others(), refuseCreate: true, wantReads: 1, wantReason: placementv1beta1.ApplyResultFailedToTakeOver},
		{name: "server-side apply creates a new object without a read", strategy: placementv1beta1.ApplyStrategyTypeServerSideApply, wantReason: placementv1beta1.ApplyResultApplied},
		{name: "server-side apply of an object the cache has not seen conflicts and it is read", strategy: placementv1beta1.ApplyStrategyTypeServerSideApply, onMember: others(), wantReads: 1, wantReason: placementv1beta1.ApplyResultFailedToTakeOver},
		{name: "server-side apply of an object created just before it conflicts and it is read", strategy: placementv1beta1.ApplyStrategyTypeServerSideApply, onMember: others(), createdBeforeTheApply: true, wantReads: 1, wantReason: placementv1beta1.ApplyResultFailedToTakeOver},
	}
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, meta.RESTScopeNamespace)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			onMember := tc.onMember
			funcs := interceptor.Funcs{Patch: applyAsTheAPIServer}
			if tc.createdBeforeTheApply {
				onMember = nil
				funcs.Patch = func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
					for _, o := range tc.onMember {
						_ = c.Create(ctx, o.DeepCopyObject().(client.Object))
					}
					return applyAsTheAPIServer(ctx, c, obj, patch, opts...)
				}
			}
			if tc.refuseCreate {
				funcs.Create = func(context.Context, client.WithWatch, client.Object, ...client.CreateOption) error {
					return apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "settings", errors.New("exceeded quota"))
				}
			}
			api := fake.NewClientBuilder().WithRESTMapper(mapper).WithObjects(onMember...).WithInterceptorFuncs(funcs)
			member := &memberWithCache{cache: fake.NewClientBuilder().Build(), api: api.Build(), unsynced: tc.unsynced}
			a := &applier{member: member.api, reader: (&Reconciler{Member: member}).reader(), owner: platform,
				strategy: strategyOf(&placementv1beta1.Work{Spec: placementv1beta1.WorkSpec{ApplyStrategy: &placementv1beta1.ApplyStrategy{Type: tc.strategy}}})}
			m := &manifest{obj: object("ConfigMap", "app", "settings", nil), hash: "h1"}
			value := "blue"
			if tc.big {
				value = strings.Repeat("b", maxLastAppliedSize)
			}
			_ = unstructured.SetNestedField(m.obj.Object, value, "data", "color")
			a.startWave()
			a.apply(context.Background(), m)

			if m.applied.reason != tc.wantReason {
				t.Errorf("outcome = %+v, want %s", m.applied, tc.wantReason)
			}
			if member.apiReads != tc.wantReads {
				t.Errorf("%d reads from the API server, want %d", member.apiReads, tc.wantReads)
			}
			live := &unstructured.Unstructured{}
			live.SetGroupVersionKind(m.obj.GroupVersionKind())
			if err := member.api.Get(context.Background(), client.ObjectKeyFromObject(m.obj), live); err != nil {
				t.Fatal(err)
			}
			wantOwner := platform.identity
			if len(tc.onMember) > 0 {
				wantOwner = "fleet/other"
			}
			if got := live.GetAnnotations()[placementv1beta1.OwnerAnnotation]; got != wantOwner {
				t.Errorf("the member's object is placed by %q, want %q", got, wantOwner)
			}
		})
	}
}

// applyAsTheAPIServer stands in for a server-side apply, which the fake
// client does not serve, as far as the applier relies on it: an object that
// does not exist is created whatever resourceVersion the apply names; an
// existing one is written only if the apply names its resourceVersion or
// none. (test/e2e/members checks ApplyIfAbsent on a real API server.)
func applyAsTheAPIServer(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	if patch.Type() != types.ApplyPatchType {
		return c.Patch(ctx, obj, patch, opts...)
	}
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(obj.GetObjectKind().GroupVersionKind())
	err := c.Get(ctx, client.ObjectKeyFromObject(obj), live)
	switch {
	case apierrors.IsNotFound(err):
		obj.SetResourceVersion("")
		return c.Create(ctx, obj)
	case err != nil:
		return err
	case obj.GetResourceVersion() != "" && obj.GetResourceVersion() != live.GetResourceVersion():
		return apierrors.NewConflict(schema.GroupResource{Resource: "configmaps"}, obj.GetName(), errors.New("the object has been modified"))
	}
	obj.SetResourceVersion(live.GetResourceVersion())
	return c.Update(ctx, obj)
}

// A kind the hub cannot tell the scope of reaches the member in a
// ResourceEnvelope's Work; cluster-scoped there, it is refused, not
// applied without its namespace.
func TestNamespacedEnvelopeCarriesNoClusterScopedObject(t *testing.T) {
	mapper := meta.NewDefaultRESTMapper(nil)
	widget := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}
	mapper.Add(widget, meta.RESTScopeRoot)
	member := fake.NewClientBuilder().WithRESTMapper(mapper).Build()
	work := &placementv1beta1.Work{ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: map[string]string{
		placementv1beta1.WorkspaceLabel: "fleet", placementv1beta1.PlacementTrackingLabel: "p",
		placementv1beta1.EnvelopeTypeLabel: string(placementv1beta1.ResourceEnvelopeType), placementv1beta1.EnvelopeNamespaceLabel: "app", placementv1beta1.EnvelopeNameLabel: "widgets"}}}
	a := &applier{member: member, reader: (&Reconciler{Member: &memberWithCache{cache: member, api: member}}).reader(), owner: ownerOf(work),
		strategy: strategyOf(work), namespacedEnvelope: namespacedEnvelope(work)}
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(widget)
	obj.SetNamespace("app")
	obj.SetName("w")
	m := &manifest{obj: obj, hash: "h1"}
	a.startWave()
	a.apply(context.Background(), m)

	if m.applied.ok || m.applied.reason != placementv1beta1.ApplyResultFailedToApply ||
		!strings.Contains(m.applied.message, "cluster-scoped on this member cluster: ResourceEnvelope app/widgets carries namespaced objects only") {
		t.Fatalf("outcome = %+v, want a refusal naming the envelope", m.applied)
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(widget.GroupVersion().WithKind("WidgetList"))
	if err := member.List(context.Background(), list); err != nil || len(list.Items) != 0 {
		t.Errorf("on the member: %v (%v), want nothing", list.Items, err)
	}
}
