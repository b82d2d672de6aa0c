package server

import (
	"bytes"
	"context"
	"fmt"

	"github.com/klauspost/compress/zstd"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/storage/value"
	"k8s.io/apiserver/pkg/storage/value/encrypt/identity"
)

// compressedPrefix marks a value the hub compressed before storing it in
// etcd. Objects are stored as JSON (custom resources) or as Kubernetes'
// protobuf ("k8s\x00"), encrypted ones as "k8s:enc:...": none starts so.
const compressedPrefix = "fleet:zstd:"

// maxDecompressed bounds what one stored value may decompress to. etcd
// takes requests of at most 1.5 MiB; a value of 1.5 MiB of JSON compresses
// to far less, so 64 MiB only ever refuses a corrupt value.
const maxDecompressed = 64 << 20

var (
	// The fastest level: values are a few KB of JSON that repeats its own
	// field names (a Work 2.5 KB → 0.8 KB, a placement's 143 KB of
	// per-cluster status → 2.5 KB); higher levels save a few % more.
	zstdEncoder, _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithLowerEncoderMem(true))
	zstdDecoder, _ = zstd.NewReader(nil, zstd.WithDecoderMaxMemory(maxDecompressed), zstd.WithDecoderLowmem(true))
)

// compressedStorage stores every object compressed in etcd (when compress
// is set) and reads compressed and uncompressed values alike, so a hub
// reads the data of a hub that did not compress and, with compression
// turned off, still reads what it compressed before.
//
// etcd's database puts at least two values on a node of 4 KiB pages: a
// Work of 2.5 KB or a binding of 2.1 KB took a page to itself, and with
// 1,000 placements of 100 clusters the file (1.1 GB, which etcd maps and
// its reads keep resident) was a third of the hub's memory; compressed,
// 439 MB (docs/performance.md).
func compressedStorage(compress bool) func(generic.RESTOptionsGetter) generic.RESTOptionsGetter {
	return func(g generic.RESTOptionsGetter) generic.RESTOptionsGetter {
		return compressingGetter{RESTOptionsGetter: g, compress: compress}
	}
}

type compressingGetter struct {
	generic.RESTOptionsGetter
	compress bool
}

func (g compressingGetter) GetRESTOptions(resource schema.GroupResource, example runtime.Object) (generic.RESTOptions, error) {
	opts, err := g.RESTOptionsGetter.GetRESTOptions(resource, example)
	if err != nil || opts.StorageConfig == nil {
		return opts, err
	}
	config := *opts.StorageConfig
	inner := config.Transformer
	if inner == nil { // what the storage would use without one
		inner = identity.NewEncryptCheckTransformer()
	}
	config.Transformer = zstdTransformer{inner: inner, compress: g.compress}
	opts.StorageConfig = &config
	return opts, nil
}

// zstdTransformer compresses a value before the inner transformer (an
// encryption, say: encrypted data does not compress) and decompresses it
// after.
type zstdTransformer struct {
	inner    value.Transformer
	compress bool
}

func (t zstdTransformer) TransformToStorage(ctx context.Context, data []byte, dataCtx value.Context) ([]byte, error) {
	if t.compress {
		out := make([]byte, len(compressedPrefix), len(compressedPrefix)+len(data)/2)
		copy(out, compressedPrefix)
		data = zstdEncoder.EncodeAll(data, out)
	}
	return t.inner.TransformToStorage(ctx, data, dataCtx)
}

// TransformFromStorage does not call an uncompressed value stale: the API
// server writes a stale value back even when an update changes nothing,
// and no-op updates (kcp's bootstrap makes some at every start) would turn
// into writes. A value is compressed at its next real write.
func (t zstdTransformer) TransformFromStorage(ctx context.Context, data []byte, dataCtx value.Context) ([]byte, bool, error) {
	data, stale, err := t.inner.TransformFromStorage(ctx, data, dataCtx)
	if err != nil || !bytes.HasPrefix(data, []byte(compressedPrefix)) {
		return data, stale, err
	}
	out, err := zstdDecoder.DecodeAll(data[len(compressedPrefix):], nil)
	if err != nil {
		return nil, false, fmt.Errorf("decompressing the value stored at %s: %w", dataCtx.AuthenticatedData(), err)
	}
	return out, stale, nil
}
