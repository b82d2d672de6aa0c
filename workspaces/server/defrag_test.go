package server

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kcp-dev/embeddedetcd"
	embeddedoptions "github.com/kcp-dev/embeddedetcd/options"
	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"

	genericoptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/apiserver/pkg/storage/etcd3/testserver"
	"k8s.io/apiserver/pkg/storage/storagebackend"
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
	defragmentsOnceFree(t, cfg, client.Client)
}

// The same through kcp's embedded etcd, which takes client certificates:
// the hub's client finds its way in as the API server's does.
func TestDefragmentKcpsEmbeddedEtcd(t *testing.T) {
	o := embeddedoptions.NewOptions(t.TempDir())
	o.Enabled = true
	o.ClientPort, o.PeerPort = freePort(t), freePort(t)
	etcdOptions := genericoptions.NewEtcdOptions(storagebackend.NewDefaultConfig("/registry", nil))
	cfg, err := embeddedetcd.NewConfig(o.Complete(etcdOptions), false)
	if err != nil {
		t.Fatal(err)
	}
	cfg.UnsafeNoFsync = true
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := embeddedetcd.NewServer(cfg.Complete()).Run(ctx); err != nil {
		t.Fatal(err)
	}
	// The API server's certificate, not the one the hub's client uses.
	secrets := filepath.Join(o.Directory, "secrets")
	tlsConfig, err := transport.TLSInfo{
		CertFile: filepath.Join(secrets, "client", "cert.pem"), KeyFile: filepath.Join(secrets, "client", "key.pem"),
		TrustedCAFile: filepath.Join(secrets, "ca", "cert.pem"),
	}.ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	client, err := clientv3.New(clientv3.Config{Endpoints: etcdOptions.StorageConfig.Transport.ServerList, TLS: tlsConfig, DialTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	defragmentsOnceFree(t, cfg.Config, client)
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// defragmentsOnceFree starts the defragmenter on cfg's etcd, fills the
// database, and checks that it is defragmented only once its data was
// deleted and compacted, and keeps what is in use.
func defragmentsOnceFree(t *testing.T, cfg *embed.Config, client *clientv3.Client) {
	t.Helper()
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

	// Nothing to gain yet: the checks leave the file as it is.
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
	got, err := client.Get(ctx, "/registry/kept")
	if err != nil || len(got.Kvs) != 1 || string(got.Kvs[0].Value) != "kept" {
		t.Fatalf("the data in use after defragmenting: %v, %v", got, err)
	}
}
