package server

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"k8s.io/apiserver/pkg/storage/etcd3/testserver"
)

func TestWorthDefragmenting(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		size, inUse int64
		want        bool
	}{
		{size: 74 * mib, inUse: 30 * mib, want: true},
		{size: 64 * mib, inUse: 32 * mib, want: true},      // half free, 32 MiB
		{size: 64 * mib, inUse: 33 * mib, want: false},     // less than half
		{size: 40 * mib, inUse: 10 * mib, want: false},     // most, but under 32 MiB
		{size: 2000 * mib, inUse: 1100 * mib, want: false}, // 900 MiB, not half
		{size: 2000 * mib, inUse: 900 * mib, want: true},
	} {
		if got := worthDefragmenting(c.size, c.inUse); got != c.want {
			t.Errorf("worthDefragmenting(%d MiB, %d MiB in use) = %t, want %t", c.size/mib, c.inUse/mib, got, c.want)
		}
	}
}

// A database whose data was deleted and compacted gets its file back to
// the size of what is in use; one still in use is left alone.
func TestDefragmentWhenMostlyFree(t *testing.T) {
	cfg := testserver.NewTestConfig(t)
	client := testserver.RunEtcd(t, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	endpoint := cfg.AdvertiseClientUrls[0].String()

	value := strings.Repeat("x", 1<<20)
	for i := range 48 {
		if _, err := client.Put(ctx, fmt.Sprintf("/registry/widgets/%d", i), value); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := client.Put(ctx, "/registry/kept", "kept"); err != nil {
		t.Fatal(err)
	}
	status := func() (size, inUse int64) {
		s, err := client.Status(ctx, endpoint)
		if err != nil {
			t.Fatal(err)
		}
		return s.DbSize, s.DbSizeInUse
	}
	full, _ := status()

	// Nothing to gain yet: the check leaves the file as it is.
	if err := defragmentWhenMostlyFree(ctx, cfg, 100*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	if size, _ := status(); size < full {
		t.Fatalf("the database in use was defragmented: %d bytes, was %d", size, full)
	}

	deleted, err := client.Delete(ctx, "/registry/widgets/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Compact(ctx, deleted.Header.Revision); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for i := 0; ; i++ {
		// etcd's database frees the pages of a compaction for reuse at a
		// later write, as the hub's steady writes would.
		if _, err := client.Put(ctx, "/registry/later", fmt.Sprint(i)); err != nil {
			t.Fatal(err)
		}
		size, inUse := status()
		if size < full/4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the database was not defragmented: %d bytes, %d in use (%d before the deletion)", size, inUse, full)
		}
		time.Sleep(100 * time.Millisecond)
	}
	got, err := client.Client.Get(ctx, "/registry/kept")
	if err != nil || len(got.Kvs) != 1 || string(got.Kvs[0].Value) != "kept" {
		t.Fatalf("the data in use after defragmenting: %v, %v", got, err)
	}
}
