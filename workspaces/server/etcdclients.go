package server

import (
	"context"
	"fmt"
	"hash/fnv"
	"reflect"
	"sync"
	"time"

	grpcprom "github.com/grpc-ecosystem/go-grpc-prometheus"
	"go.etcd.io/etcd/client/pkg/v3/logutil"
	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/kubernetes"
	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"google.golang.org/grpc"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	genericfeatures "k8s.io/apiserver/pkg/features"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/server/egressselector"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/etcd3"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/apiserver/pkg/storage/storagebackend/factory"
	"k8s.io/apiserver/pkg/storage/value/encrypt/identity"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/tools/cache"
	componenttracing "k8s.io/component-base/tracing"
)

// etcdClientCount is how many etcd clients the resources of one hub share.
// The API server opens a client per resource (per served version of a
// custom resource): 215 gRPC connections on an idle hub, each with ~10
// goroutines and ~100 KB of buffers on the API server's side and the
// embedded etcd's. A few clients keep watch traffic on more than one
// connection and stream (every watch of a client shares one gRPC stream).
const etcdClientCount = 8

// The API server's settings for its etcd clients (k8s.io/apiserver's
// storage factory).
const (
	etcdDialTimeout      = 20 * time.Second
	etcdKeepaliveTime    = 30 * time.Second
	etcdKeepaliveTimeout = 10 * time.Second
)

// sharedEtcdClients creates resources' etcd storage on a fixed set of etcd
// clients, where the API server's storage factory would open one for each.
// A resource always gets the same client; clients are dialled on first use
// and closed by Close, once the API server has stopped.
type sharedEtcdClients struct {
	mu        sync.Mutex
	transport *storagebackend.TransportConfig // of the first storage; others must match
	logger    *zap.Logger                     // set with transport
	stop      context.CancelFunc              // the compactor's
	closed    bool

	slots [etcdClientCount]struct {
		mu     sync.Mutex // held while dialling: only the slot's resources wait
		client *kubernetes.Client
	}
}

// shareable tells whether a storage config can use the shared clients: the
// direct connection the clients are made for (no egress dialer), to the
// servers of the first storage (Fleetplane has no per-resource etcd
// servers; any other goes to the factory).
func (s *sharedEtcdClients) shareable(c *storagebackend.ConfigForResource) bool {
	if c == nil || (c.Type != "" && c.Type != storagebackend.StorageTypeETCD3) {
		return false
	}
	if c.Transport.EgressLookup != nil { // the API server always has one; without egress rules it dials directly
		if dialer, err := c.Transport.EgressLookup(egressselector.Etcd.AsNetworkContext()); err != nil || dialer != nil {
			return false
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.transport == nil {
		// All storage of one API server has its tracer provider.
		s.transport = &storagebackend.TransportConfig{
			ServerList: c.Transport.ServerList, KeyFile: c.Transport.KeyFile, CertFile: c.Transport.CertFile, TrustedCAFile: c.Transport.TrustedCAFile,
			TracerProvider: c.Transport.TracerProvider,
		}
		// One logger for all clients; set here, before any slot dials.
		logger, err := logutil.CreateDefaultZapLogger(zapcore.InfoLevel)
		if err != nil {
			logger = zap.NewNop()
		}
		s.logger = logger.Named("etcd-client")
	}
	return reflect.DeepEqual(s.transport.ServerList, c.Transport.ServerList) && s.transport.KeyFile == c.Transport.KeyFile &&
		s.transport.CertFile == c.Transport.CertFile && s.transport.TrustedCAFile == c.Transport.TrustedCAFile
}

// newStorage is the storage factory's etcd storage on a shared client.
// Destroying it ends its watches, as closing its own client would: the API
// server destroys a custom resource's storage when its definition changes,
// and watches must not go on decoding with the old one.
func (s *sharedEtcdClients) newStorage(c *storagebackend.ConfigForResource, newFunc, newListFunc func() runtime.Object, resourcePrefix string) (storage.Interface, factory.DestroyFunc, error) {
	client, err := s.client(c)
	if err != nil {
		return nil, nil, fmt.Errorf("connecting to etcd for %s: %w", c.GroupResource, err)
	}
	transformer := c.Transformer
	if transformer == nil {
		transformer = identity.NewEncryptCheckTransformer()
	}
	versioner := storage.APIObjectVersioner{}
	decoder := etcd3.NewDefaultDecoder(c.Codec, versioner)
	store := etcd3.New(client, c.Codec, newFunc, newListFunc, c.Prefix, resourcePrefix, c.GroupResource, transformer, c.LeaseManagerConfig, decoder, versioner)
	alive, destroy := context.WithCancel(context.Background())
	return destroyableStorage{Interface: store, alive: alive}, factory.DestroyFunc(destroy), nil
}

// client returns the resource's client, dialling it (and starting the
// compactor with the first) if it is not yet open.
func (s *sharedEtcdClients) client(c *storagebackend.ConfigForResource) (*kubernetes.Client, error) {
	h := fnv.New32a()
	h.Write([]byte(c.GroupResource.String()))
	slot := &s.slots[h.Sum32()%etcdClientCount]

	slot.mu.Lock()
	defer slot.mu.Unlock()
	if slot.client != nil {
		return slot.client, nil
	}
	client, err := s.dial()
	if err != nil {
		return nil, err
	}
	// Track etcd's latency per request, as the factory does.
	client.KV = etcd3.NewETCDLatencyTracker(client.KV)

	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		_ = client.Close()
		return nil, fmt.Errorf("the API server's etcd clients are closed")
	}
	slot.client = client
	if s.stop == nil && c.CompactionInterval > 0 {
		ctx, cancel := context.WithCancel(context.Background())
		s.stop = cancel
		// One compactor per etcd in the process: a no-op if one runs.
		etcd3.StartCompactor(ctx, client.Client, c.CompactionInterval)
	}
	return client, nil
}

func (s *sharedEtcdClients) dial() (*kubernetes.Client, error) {
	tlsConfig, err := transport.TLSInfo{CertFile: s.transport.CertFile, KeyFile: s.transport.KeyFile, TrustedCAFile: s.transport.TrustedCAFile}.ClientConfig()
	if err != nil {
		return nil, err
	}
	if s.transport.CertFile == "" && s.transport.KeyFile == "" && s.transport.TrustedCAFile == "" {
		tlsConfig = nil // the client takes nil for a plain connection
	}
	dialOptions := []grpc.DialOption{
		// etcd's client dials with grpc.DialContext, which still honours
		// it: New returns once connected, as the API server's own client.
		grpc.WithBlock(), //nolint:staticcheck // see above
		// The API server's etcd request metrics, after etcd's retries.
		grpc.WithChainUnaryInterceptor(grpcprom.UnaryClientInterceptor),
		grpc.WithChainStreamInterceptor(grpcprom.StreamClientInterceptor),
	}
	if utilfeature.DefaultFeatureGate.Enabled(genericfeatures.APIServerTracing) {
		// Passes the request's trace context on even with no tracer configured.
		tracing := []otelgrpc.Option{
			otelgrpc.WithMessageEvents(otelgrpc.ReceivedEvents, otelgrpc.SentEvents),
			otelgrpc.WithPropagators(componenttracing.Propagators()),
			otelgrpc.WithTracerProvider(s.transport.TracerProvider),
		}
		dialOptions = append(dialOptions, grpc.WithStatsHandler(otelgrpc.NewClientHandler(tracing...)))
	}
	return kubernetes.New(clientv3.Config{
		Endpoints:            s.transport.ServerList,
		TLS:                  tlsConfig,
		DialTimeout:          etcdDialTimeout,
		DialKeepAliveTime:    etcdKeepaliveTime,
		DialKeepAliveTimeout: etcdKeepaliveTimeout,
		Logger:               s.logger,
		DialOptions:          dialOptions,
	})
}

// Close stops the compactor and closes the clients.
func (s *sharedEtcdClients) Close() {
	s.mu.Lock()
	s.closed = true
	if s.stop != nil {
		s.stop()
	}
	s.mu.Unlock()
	for i := range s.slots {
		slot := &s.slots[i]
		slot.mu.Lock()
		if slot.client != nil {
			_ = slot.client.Close()
			slot.client = nil
		}
		slot.mu.Unlock()
	}
}

// destroyableStorage ends its watches when it is destroyed (alive is done).
type destroyableStorage struct {
	storage.Interface
	alive context.Context
}

func (s destroyableStorage) Watch(ctx context.Context, key string, opts storage.ListOptions) (watch.Interface, error) {
	ctx, cancel := context.WithCancel(ctx)
	unregister := context.AfterFunc(s.alive, cancel)
	w, err := s.Interface.Watch(ctx, key, opts)
	if err != nil {
		unregister()
		cancel()
		return nil, err
	}
	return &releasingWatch{Interface: w, release: func() { unregister(); cancel() }}, nil
}

// releasingWatch lets go of its storage's destruction when stopped.
type releasingWatch struct {
	watch.Interface
	release func()
}

func (w *releasingWatch) Stop() {
	w.Interface.Stop()
	w.release()
}

// decorator replaces the API server's storage without a watch cache (the
// only one that opens a client per resource) with storage on the shared
// clients where the resource's config allows; other decorators, and every
// decorator when s is nil, are kept.
func (s *sharedEtcdClients) decorator(d generic.StorageDecorator) generic.StorageDecorator {
	if s == nil || !undecorated(d) {
		return d
	}
	return func(config *storagebackend.ConfigForResource, resourcePrefix string, keyFunc func(context.Context, runtime.Object) (string, error),
		newFunc, newListFunc func() runtime.Object, getAttrsFunc storage.AttrFunc, trigger storage.IndexerFuncs, indexers *cache.Indexers) (storage.Interface, factory.DestroyFunc, error) {
		if !s.shareable(config) {
			return d(config, resourcePrefix, keyFunc, newFunc, newListFunc, getAttrsFunc, trigger, indexers)
		}
		return s.newStorage(config, newFunc, newListFunc, resourcePrefix)
	}
}

// undecorated tells whether a decorator is the API server's storage without
// a watch cache, the one shared clients replace.
func undecorated(d generic.StorageDecorator) bool {
	return reflect.ValueOf(d).Pointer() == reflect.ValueOf(generic.UndecoratedStorage).Pointer()
}
