package server

import (
	"strings"
	"time"

	kcpcache "github.com/kcp-dev/apimachinery/v2/pkg/cache"
	kcpapiextensionsclientset "github.com/kcp-dev/client-go/apiextensions/client"
	kcpapiextensionsinformers "github.com/kcp-dev/client-go/apiextensions/informers"
	kcpdynamicinformer "github.com/kcp-dev/client-go/dynamic/dynamicinformer"
	kcpinformers "github.com/kcp-dev/client-go/informers"
	"github.com/kcp-dev/kcp/pkg/informer"
	metadataclient "github.com/kcp-dev/kcp/pkg/metadata"
	kcpserver "github.com/kcp-dev/kcp/pkg/server"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// leanMetadataInformers replaces kcp's discovering metadata informers with
// the same informers keeping less of each object (leanMetadata). kcp keeps
// the metadata of every object of every resource, as nested maps, for its
// garbage collector, quota, permission-claim labels and workspace mounts;
// with managed fields that was ~60 KB of the hub's memory per
// placement-cluster pair. The factory is kcp's own (its discovery of
// resources from CRDs, its informers); only the objects it stores are
// smaller. It must run between kcp's NewServer and Run, before anything
// takes the factory. kcp's replication of CachedResources would need the
// labels the informers drop (its label selector, the copies it writes); it
// runs only behind kcp's CacheAPIs feature gate, which the hub leaves off.
// The uninformed resources are left out of its discovery.
func leanMetadataInformers(s *kcpserver.Server, uninformed []schema.GroupResource) error {
	loopback := rest.CopyConfig(s.MiniAggregator.GenericAPIServer.LoopbackClientConfig)
	metadata, err := metadataclient.NewDynamicMetadataClusterClientForConfig(rest.AddUserAgent(rest.CopyConfig(loopback), "fleet-partial-metadata-informers"))
	if err != nil {
		return err
	}
	// kcp's CRD informer already carries the index its resource discovery
	// adds; a second discovery needs a CRD informer of its own.
	crdClient, err := kcpapiextensionsclientset.NewForConfig(loopback)
	if err != nil {
		return err
	}
	crds := kcpapiextensionsinformers.NewSharedInformerFactoryWithOptions(crdClient, 0)
	crdInformer := crds.Apiextensions().V1().CustomResourceDefinitions().Informer()
	// Cannot fail: the informer has not started.
	_ = crdInformer.SetTransform(crdNamesOnly)
	crdSource, err := informer.NewCRDGVRSource(crdInformer)
	if err != nil {
		return err
	}
	source := withoutResources{GVRSource: crdSource, left: sets.New(uninformed...)}
	factory, err := informer.NewGenericDiscoveringDynamicSharedInformerFactory[kcpcache.ScopeableSharedIndexInformer, kcpcache.GenericClusterLister](
		func(gvr schema.GroupVersionResource, resync time.Duration, indexers cache.Indexers) kcpinformers.GenericClusterInformer {
			indexers[kcpcache.ClusterIndexName] = kcpcache.ClusterIndexFunc
			indexers[kcpcache.ClusterAndNamespaceIndexName] = kcpcache.ClusterAndNamespaceIndexFunc
			inf := kcpdynamicinformer.NewFilteredDynamicInformer(metadata, gvr, resync, indexers, nil)
			// Cannot fail: the informer has not started.
			_ = inf.Informer().SetTransform(leanMetadata)
			return inf
		},
		nil, source, cache.Indexers{},
	)
	if err != nil {
		return err
	}
	s.DiscoveringDynamicSharedInformerFactory = &informer.DiscoveringDynamicSharedInformerFactory{GenericDiscoveringDynamicSharedInformerFactory: factory}
	return s.AddPostStartHook("fleet-metadata-informers-crds", func(ctx genericapiserver.PostStartHookContext) error {
		crds.Start(ctx.Done())
		return nil
	})
}

// withoutResources leaves resources out of what a GVRSource discovers.
type withoutResources struct {
	informer.GVRSource
	left sets.Set[schema.GroupResource]
}

func (s withoutResources) GVRs() map[schema.GroupVersionResource]informer.GVRPartialMetadata {
	gvrs := s.GVRSource.GVRs() // a new map each call
	for gvr := range gvrs {
		if s.left.Has(gvr.GroupResource()) {
			delete(gvrs, gvr)
		}
	}
	return gvrs
}

// crdNamesOnly keeps of a CRD what the resource discovery reads (group,
// names, scope, versions, whether it is established) and drops its schemas:
// a second copy of every API's OpenAPI schema, the workload APIs' among
// them, in a cache that never reads one.
func crdNamesOnly(obj any) (any, error) {
	crd, ok := obj.(*apiextensionsv1.CustomResourceDefinition)
	if !ok {
		return obj, nil // a tombstone
	}
	crd.ManagedFields = nil
	// A CRD applied client-side carries a whole copy of itself here.
	delete(crd.Annotations, corev1.LastAppliedConfigAnnotation)
	crd.Spec.Conversion = nil
	for i := range crd.Spec.Versions {
		v := &crd.Spec.Versions[i]
		v.Schema, v.AdditionalPrinterColumns, v.SelectableFields = nil, nil, nil
	}
	return crd, nil
}

// keptMetadata are the metadata fields kcp's consumers of the metadata
// informers read: identity, owners and deletion for the garbage collector,
// the resource version for its patches and workspace mounts.
var keptMetadata = [...]string{"name", "namespace", "uid", "resourceVersion",
	"ownerReferences", "finalizers", "deletionTimestamp", "deletionGracePeriodSeconds"}

// leanMetadata keeps of an object its kind, keptMetadata and the labels and
// annotations of kcp's own domain (the workspace, permission-claim labels,
// the original API version, mounts); the rest (creation time, generation,
// managed fields, everyone else's labels and annotations such as
// kubectl's last applied configuration) no consumer reads. The decoded
// maps are freed for new ones of the exact size (a map of up to eight
// entries is one group): a Work's metadata keeps 6 of its 10 fields and 1
// of its 11 labels and annotations.
func leanMetadata(obj any) (any, error) {
	// kcp's informers transform every delta: tombstones too, and on
	// resync objects already lean, which come out the same.
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	top := make(map[string]any, 3)
	in, _ := u.Object["metadata"].(map[string]any)
	top["metadata"] = leanObjectMeta(in)
	for _, f := range []string{"apiVersion", "kind"} {
		if v, ok := u.Object[f]; ok {
			top[f] = v
		}
	}
	return &unstructured.Unstructured{Object: top}, nil
}

// leanObjectMeta returns the kept fields of an object's metadata in a map
// of their number.
func leanObjectMeta(in map[string]any) map[string]any {
	var kept [len(keptMetadata) + 2]struct {
		key   string
		value any
	}
	n := 0
	for _, f := range keptMetadata {
		if v, ok := in[f]; ok {
			kept[n].key, kept[n].value = f, v
			n++
		}
	}
	for _, f := range []string{"labels", "annotations"} {
		if m := kcpKeys(in[f]); m != nil {
			kept[n].key, kept[n].value = f, m
			n++
		}
	}
	meta := make(map[string]any, n)
	for _, e := range kept[:n] {
		meta[e.key] = e.value
	}
	return meta
}

// kcpKeys returns the entries of a label or annotation map whose key is in
// kcp's domain (kcp.io/cluster, claimed.internal.apis.kcp.io/...), or nil.
func kcpKeys(m any) map[string]any {
	in, _ := m.(map[string]any)
	n := 0
	for k := range in {
		if inKcpDomain(k) {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	kept := make(map[string]any, n)
	for k, v := range in {
		if inKcpDomain(k) {
			kept[k] = v
		}
	}
	return kept
}

// inKcpDomain tells whether a label or annotation key's prefix is kcp.io or
// one of its subdomains.
func inKcpDomain(key string) bool {
	domain, _, found := strings.Cut(key, "/")
	return found && (domain == "kcp.io" || strings.HasSuffix(domain, ".kcp.io"))
}
