package server

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/apiserver/pkg/storage/value"
)

// configOptions hands out one storage config, as the API server's getters
// do for each resource.
type configOptions struct {
	config *storagebackend.ConfigForResource
}

func (o configOptions) GetRESTOptions(schema.GroupResource, runtime.Object) (generic.RESTOptions, error) {
	return generic.RESTOptions{StorageConfig: o.config}, nil
}

// enveloping stands for an encryption: it wraps what it stores.
type enveloping struct{}

func (enveloping) TransformToStorage(_ context.Context, data []byte, _ value.Context) ([]byte, error) {
	return append([]byte("env:"), data...), nil
}

func (enveloping) TransformFromStorage(_ context.Context, data []byte, _ value.Context) ([]byte, bool, error) {
	return bytes.TrimPrefix(data, []byte("env:")), false, nil
}

func transformerOf(t *testing.T, compress bool, inner value.Transformer) value.Transformer {
	t.Helper()
	config := &storagebackend.ConfigForResource{Config: storagebackend.Config{Transformer: inner}}
	opts, err := compressedStorage(compress)(configOptions{config}).GetRESTOptions(schema.GroupResource{Resource: "works"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if config.Transformer != inner {
		t.Fatal("the getter changed the storage config it was handed")
	}
	return opts.StorageConfig.Transformer
}

var work = []byte(`{"apiVersion":"placement.kubernetes-fleet.io/v1","kind":"Work","metadata":{"name":"crp-1-work","namespace":"fleet-member-m1",` +
	`"labels":{"kubernetes-fleet.io/parent-CRP":"crp-1","kubernetes-fleet.io/parent-resource-binding":"crp-1-m1-abcde"}},"status":{"conditions":[` +
	strings.Repeat(`{"type":"Applied","status":"True","observedGeneration":1,"lastTransitionTime":"2026-11-29T13:00:00Z","reason":"WorkAppliedCompleted","message":"All the manifests are applied"},`, 6) +
	`{"type":"Available","status":"True"}]}}`)

func TestCompressedStorageRoundTrip(t *testing.T) {
	ctx, key := context.Background(), value.DefaultContext("/registry/works/m1/crp-1-work")
	tr := transformerOf(t, true, nil)
	stored, err := tr.TransformToStorage(ctx, work, key)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(stored, []byte(compressedPrefix)) || len(stored) >= len(work)/2 {
		t.Fatalf("stored %d bytes for %d (%q...): want them compressed", len(stored), len(work), stored[:min(len(stored), 16)])
	}
	read, stale, err := tr.TransformFromStorage(ctx, stored, key)
	if err != nil || stale || !bytes.Equal(read, work) {
		t.Fatalf("read back %q, stale %v, err %v", read, stale, err)
	}
}

func TestCompressedStorageReadsEitherForm(t *testing.T) {
	ctx, key := context.Background(), value.DefaultContext("/registry/works/m1/crp-1-work")
	compressed, err := transformerOf(t, true, nil).TransformToStorage(ctx, work, key)
	if err != nil {
		t.Fatal(err)
	}
	for _, compress := range []bool{true, false} {
		tr := transformerOf(t, compress, nil)
		for name, stored := range map[string][]byte{"uncompressed": work, "compressed": compressed} {
			read, stale, err := tr.TransformFromStorage(ctx, stored, key)
			// An uncompressed value is not stale: that would make every
			// update that changes nothing a write.
			if err != nil || stale || !bytes.Equal(read, work) {
				t.Errorf("compress=%v, %s value: read %q, stale %v, err %v", compress, name, read, stale, err)
			}
		}
	}
	stored, err := transformerOf(t, false, nil).TransformToStorage(ctx, work, key)
	if err != nil || !bytes.Equal(stored, work) {
		t.Errorf("with compression off stored %q, %v: want the value as it is", stored, err)
	}
}

func TestCompressedStorageKeepsTheInnerTransformerOutside(t *testing.T) {
	ctx, key := context.Background(), value.DefaultContext("/registry/secrets/ns/s")
	tr := transformerOf(t, true, enveloping{})
	stored, err := tr.TransformToStorage(ctx, work, key)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(stored, []byte("env:"+compressedPrefix)) {
		t.Fatalf("stored %q...: want the compressed value inside the envelope", stored[:20])
	}
	if read, _, err := tr.TransformFromStorage(ctx, stored, key); err != nil || !bytes.Equal(read, work) {
		t.Fatalf("read back %q, %v", read, err)
	}
	// Without one the API server's identity check still refuses encrypted data.
	if _, _, err := transformerOf(t, true, nil).TransformFromStorage(ctx, []byte("k8s:enc:aescbc:v1:key:..."), key); err == nil {
		t.Error("read an encrypted value without its key")
	}
}

func TestCompressedStorageNamesTheKeyOfACorruptValue(t *testing.T) {
	ctx, key := context.Background(), value.DefaultContext("/registry/works/m1/crp-1-work")
	_, _, err := transformerOf(t, true, nil).TransformFromStorage(ctx, []byte(compressedPrefix+"not zstd"), key)
	if err == nil || !strings.Contains(err.Error(), "/registry/works/m1/crp-1-work") {
		t.Fatalf("got %v, want an error naming the key", err)
	}
}
