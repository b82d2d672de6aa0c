package placement

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/workspaces/clients"
)

// errInvalidSelectors marks user errors in resource selectors; they are
// reported on the placement instead of being retried.
var errInvalidSelectors = errors.New("invalid resource selectors")

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errInvalidSelectors, fmt.Sprintf(format, args...))
}

var namespaceGVK = schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}

// selector resolves a placement's resource selectors in its workspace.
type selector struct {
	ws *clients.Workspace
	// previous are the kinds of the placement's last selection: one of them
	// not served now is a kindNotServedError, not a smaller selection,
	// unless dropUnserved says that its grace is over.
	previous     selectedKinds
	dropUnserved bool
}

// notServed judges a kind the workspace does not serve: nil when it may be
// left out, a kindNotServedError when the last selection held it.
func (s *selector) notServed(gk schema.GroupKind, namespace string, cause string) error {
	if s.dropUnserved || !s.previous[gk][namespace] {
		return nil
	}
	return &kindNotServedError{gk: gk, cause: cause}
}

// selectResources returns the objects a placement selects, sanitized and in
// a stable order. namespace is the placement's namespace for a
// ResourcePlacement, "" for a ClusterResourcePlacement.
func (s *selector) selectResources(ctx context.Context, namespace string, terms []placementv1beta1.ResourceSelectorTerm) ([]*unstructured.Unstructured, error) {
	if err := checkTerms(terms); err != nil {
		return nil, err
	}
	picked := map[string]*unstructured.Unstructured{}
	add := func(objs ...*unstructured.Unstructured) {
		for _, o := range objs {
			if !skipObject(o) {
				picked[objectKey(o)] = sanitize(o)
			}
		}
	}
	if namespace != "" {
		for _, t := range terms {
			objs, err := s.pick(ctx, t, namespace, false)
			if err != nil {
				return nil, err
			}
			add(objs...)
		}
		return sorted(picked), nil
	}

	nsTerm, scoped := scopingNamespaceTerm(terms)
	for _, t := range terms {
		gvk := termGVK(t)
		if gvk == namespaceGVK {
			namespaces, err := s.pick(ctx, t, "", true)
			if err != nil {
				return nil, err
			}
			for _, ns := range namespaces {
				if reservedNamespace(ns.GetName()) {
					continue
				}
				add(ns)
				if scope(t) == placementv1beta1.NamespaceWithResources {
					objs, err := s.allIn(ctx, ns.GetName())
					if err != nil {
						return nil, err
					}
					add(objs...)
				}
			}
			continue
		}
		namespaced, err := s.namespaced(gvk)
		if err != nil {
			return nil, err
		}
		switch {
		case !namespaced:
			objs, err := s.pick(ctx, t, "", true)
			if err != nil {
				return nil, err
			}
			add(objs...)
		case scoped:
			objs, err := s.pick(ctx, t, nsTerm.Name, false)
			if err != nil {
				return nil, err
			}
			add(objs...)
		default:
			return nil, invalid("%s is namespaced: a ClusterResourcePlacement selects cluster-scoped resources and whole namespaces; select its namespace, use selectionScope NamespaceWithResourceSelectors, or use a ResourcePlacement", gvk.Kind)
		}
	}
	return sorted(picked), nil
}

// checkTerms refuses what KubeFleet refuses when it selects: the same
// selector twice, and a reserved namespace selected by name (one matched
// by a label selector is skipped instead).
func checkTerms(terms []placementv1beta1.ResourceSelectorTerm) error {
	for i, t := range terms {
		for j := range i {
			if equality.Semantic.DeepEqual(terms[j], t) {
				return invalid("resourceSelectors[%d] and resourceSelectors[%d] are the same selector (%s); remove one of them", j, i, describeTerm(t))
			}
		}
		if termGVK(t) == namespaceGVK && t.Name != "" && reservedNamespace(t.Name) {
			return invalid("resourceSelectors[%d] selects namespace %s, which is reserved (%s are never placed); select a namespace of your own", i, t.Name, strings.Join(ReservedNamespaces, ", "))
		}
	}
	return nil
}

func describeTerm(t placementv1beta1.ResourceSelectorTerm) string {
	d := t.Kind
	if t.Group != "" {
		d += "." + t.Group
	}
	switch {
	case t.Name != "":
		d += " named " + t.Name
	case t.LabelSelector != nil:
		d += " by labelSelector " + metav1.FormatLabelSelector(t.LabelSelector)
	}
	return d
}

// scopingNamespaceTerm finds the Namespace selector in
// NamespaceWithResourceSelectors mode, whose namespace the other namespaced
// selectors pick from.
func scopingNamespaceTerm(terms []placementv1beta1.ResourceSelectorTerm) (placementv1beta1.ResourceSelectorTerm, bool) {
	for _, t := range terms {
		if termGVK(t) == namespaceGVK && scope(t) == placementv1beta1.NamespaceWithResourceSelectors {
			return t, true
		}
	}
	return placementv1beta1.ResourceSelectorTerm{}, false
}

func scope(t placementv1beta1.ResourceSelectorTerm) placementv1beta1.SelectionScope {
	if t.SelectionScope == "" {
		return placementv1beta1.NamespaceWithResources
	}
	return t.SelectionScope
}

func termGVK(t placementv1beta1.ResourceSelectorTerm) schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: t.Group, Version: t.Version, Kind: t.Kind}
}

// mapping maps a selected kind, refusing kinds the fleet never places
// first (whether the workspace serves them or not). The workspace's mapper
// looks a kind it does not know yet (a freshly created CRD or binding) up in
// discovery itself.
func (s *selector) mapping(gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	if skipKind(gvk.GroupKind()) {
		return nil, invalid("%s cannot be placed", gvk.Kind)
	}
	m, err := s.ws.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		if s.dropUnserved || s.previous[gvk.GroupKind()] == nil {
			return nil, invalid("the workspace does not serve %s; check group, version and kind", gvk)
		}
		return nil, &kindNotServedError{gk: gvk.GroupKind(), cause: err.Error()}
	}
	return m, err
}

func (s *selector) namespaced(gvk schema.GroupVersionKind) (bool, error) {
	m, err := s.mapping(gvk)
	if err != nil {
		return false, err
	}
	return m.Scope.Name() == meta.RESTScopeNameNamespace, nil
}

// pick gets the object a term names, or lists those its label selector
// matches (all of the kind when neither is set).
func (s *selector) pick(ctx context.Context, t placementv1beta1.ResourceSelectorTerm, namespace string, wantClusterScoped bool) ([]*unstructured.Unstructured, error) {
	gvk := termGVK(t)
	m, err := s.mapping(gvk)
	if err != nil {
		return nil, err
	}
	clusterScoped := m.Scope.Name() == meta.RESTScopeNameRoot
	if wantClusterScoped && !clusterScoped {
		return nil, invalid("%s is namespaced: a ClusterResourcePlacement selects cluster-scoped resources and whole namespaces", gvk.Kind)
	}
	if !wantClusterScoped && clusterScoped {
		return nil, invalid("%s is cluster-scoped: a ResourcePlacement selects objects in its own namespace; use a ClusterResourcePlacement", gvk.Kind)
	}
	ri := s.ws.Dynamic.Resource(m.Resource).Namespace(namespace)
	if t.Name != "" {
		obj, err := ri.Get(ctx, t.Name, metav1.GetOptions{})
		if resourceNotServed(err) {
			// The path is not served, not the object gone: discover again.
			s.ws.Mapper.Reset()
			return nil, cmp.Or(s.notServed(gvk.GroupKind(), namespace, err.Error()), err)
		}
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		return []*unstructured.Unstructured{obj}, nil
	}
	sel := labels.Everything()
	if t.LabelSelector != nil {
		if sel, err = metav1.LabelSelectorAsSelector(t.LabelSelector); err != nil {
			return nil, invalid("labelSelector of %s: %v", gvk.Kind, err)
		}
	}
	list, err := ri.List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return nil, err
	}
	out := make([]*unstructured.Unstructured, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, &list.Items[i])
	}
	return out, nil
}

// allIn lists every placeable object in a namespace, a few kinds at a
// time: a new placement of a namespace waits for all of them.
func (s *selector) allIn(ctx context.Context, namespace string) ([]*unstructured.Unstructured, error) {
	served, err := s.ws.NamespacedResources()
	if err != nil && len(served) == 0 {
		return nil, fmt.Errorf("discovering the workspace's resources: %w", err)
	}
	servedKinds := map[schema.GroupKind]bool{}
	var resources []schema.GroupVersionResource
	for _, r := range served {
		gk := schema.GroupKind{Group: r.Group, Kind: r.Kind}
		servedKinds[gk] = true
		if !skipKind(gk) {
			resources = append(resources, r.GroupVersionResource)
		}
	}
	// A kind the namespace's last selection held that discovery does not
	// list now (its group failed to answer, its CRD is being changed) would
	// drop its objects from the members.
	for gk, namespaces := range s.previous {
		if namespaces[namespace] && !servedKinds[gk] && gk != namespaceGVK.GroupKind() {
			cause := "discovery does not list it"
			if err != nil {
				cause = err.Error()
			}
			if err := s.notServed(gk, namespace, cause); err != nil {
				return nil, err
			}
		}
	}
	kinds := make(map[schema.GroupVersionResource]schema.GroupKind, len(served))
	for _, r := range served {
		kinds[r.GroupVersionResource] = schema.GroupKind{Group: r.Group, Kind: r.Kind}
	}
	found := make([][]unstructured.Unstructured, len(resources))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(parallelLists)
	for i, gvr := range resources {
		g.Go(func() error {
			list, err := s.ws.Dynamic.Resource(gvr).Namespace(namespace).List(gctx, metav1.ListOptions{})
			if apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err) {
				return s.notServed(kinds[gvr], namespace, err.Error())
			}
			if err != nil {
				return fmt.Errorf("listing %s in namespace %s: %w", gvr.Resource, namespace, err)
			}
			found[i] = list.Items
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for _, items := range found {
		for i := range items {
			out = append(out, &items[i])
		}
	}
	return out, nil
}

// resourceNotServed tells a 404 for a path the server does not serve from
// the API's NotFound about an object: the former names no object, or is not
// an API status at all (client-go then fills in the name it asked for).
func resourceNotServed(err error) bool {
	var status apierrors.APIStatus
	if !apierrors.IsNotFound(err) || !errors.As(err, &status) {
		return false
	}
	d := status.Status().Details
	return d == nil || d.Name == "" || slices.ContainsFunc(d.Causes, func(c metav1.StatusCause) bool {
		return c.Type == metav1.CauseTypeUnexpectedServerResponse
	})
}

// parallelLists is how many kinds allIn lists at once.
const parallelLists = 8

func objectKey(o *unstructured.Unstructured) string {
	gvk := o.GroupVersionKind()
	return gvk.Group + "/" + gvk.Kind + "/" + o.GetNamespace() + "/" + o.GetName()
}

// sorted orders objects the way they are stored in snapshots: namespaces and
// CRDs first (they land in the first snapshot shard, whose Work the others
// depend on), then by group, kind, namespace and name, so that an unchanged
// selection hashes the same.
func sorted(m map[string]*unstructured.Unstructured) []*unstructured.Unstructured {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		pi, pj := sortPriority(m[keys[i]]), sortPriority(m[keys[j]])
		if pi != pj {
			return pi < pj
		}
		return keys[i] < keys[j]
	})
	out := make([]*unstructured.Unstructured, 0, len(keys))
	for _, k := range keys {
		out = append(out, m[k])
	}
	return out
}

// sortPriority puts what other objects need first.
func sortPriority(o *unstructured.Unstructured) int {
	switch gk := o.GroupVersionKind().GroupKind(); {
	case gk.Group == "" && gk.Kind == "Namespace":
		return 0
	case gk.Group == "apiextensions.k8s.io" && gk.Kind == "CustomResourceDefinition":
		return 1
	}
	return 2
}
