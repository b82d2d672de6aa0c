package server

import (
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
	"k8s.io/apimachinery/pkg/runtime/schema"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
)

// leanMetadataInformers replaces kcp's discovering metadata informers with
// the same informers minus managed fields. kcp keeps the metadata of every
// object of every resource for its garbage collector, quota and API-binding
// deletion, none of which reads managed fields; kept as nested maps they
// were ~60 KB of the hub's memory per placement-cluster pair (a binding's
// and a Work's managed fields are ~3.5 KB of JSON). The factory is kcp's
// own (its discovery of resources from CRDs, its informers); only the
// objects it stores are smaller. It must run between kcp's NewServer and
// Run, before anything takes the factory.
func leanMetadataInformers(s *kcpserver.Server) error {
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
	source, err := informer.NewCRDGVRSource(crdInformer)
	if err != nil {
		return err
	}
	factory, err := informer.NewGenericDiscoveringDynamicSharedInformerFactory[kcpcache.ScopeableSharedIndexInformer, kcpcache.GenericClusterLister](
		func(gvr schema.GroupVersionResource, resync time.Duration, indexers cache.Indexers) kcpinformers.GenericClusterInformer {
			indexers[kcpcache.ClusterIndexName] = kcpcache.ClusterIndexFunc
			indexers[kcpcache.ClusterAndNamespaceIndexName] = kcpcache.ClusterAndNamespaceIndexFunc
			inf := kcpdynamicinformer.NewFilteredDynamicInformer(metadata, gvr, resync, indexers, nil)
			// Cannot fail: the informer has not started.
			_ = inf.Informer().SetTransform(crcache.TransformStripManagedFields())
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
