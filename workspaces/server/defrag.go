package server

import (
	"context"
	"crypto/tls"
	"time"

	"github.com/kcp-dev/embeddedetcd"
	"github.com/prometheus/client_golang/prometheus"
	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/klog/v2"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// etcd's database file grows to the most its data and the history kept
// until the next compaction ever took, and never shrinks: pages freed by
// deletions and compactions are reused, not given back. Once workspaces or
// a large fleet have come and gone, the hub keeps mapping a file that is
// mostly free. A defragmentation rewrites the file without the free pages
// (into a new file, renamed into place: a hub stopped meanwhile keeps the
// old one). etcd serves nothing while it copies what is in use (0.23 s for
// 18 MB on the 2-core machine), so the hub does it only when at least half
// the file and defragMinFree are free, and never with more than
// defragMaxInUse in use: the API server's etcd health checks give up after
// 2 s, and its requests after 60.
const (
	defragMinFree       = 32 << 20
	defragMaxInUse      = 256 << 20
	defragCheckInterval = time.Minute
	statusTimeout       = 30 * time.Second
)

var embeddedEtcdDefrags = prometheus.NewHistogram(prometheus.HistogramOpts{
	Name:    "fleet_embedded_etcd_defragmentation_duration_seconds",
	Help:    "How long defragmenting the embedded etcd's database took; the hub defragments it when at least half of the file and 32 MiB are free. etcd serves no request meanwhile.",
	Buckets: prometheus.ExponentialBuckets(0.01, 4, 7),
})

func init() {
	ctrlmetrics.Registry.MustRegister(embeddedEtcdDefrags)
}

// worthDefragmenting tells whether a database file of size bytes, inUse of
// them in use, has enough free to defragment.
func worthDefragmenting(size, inUse int64) bool {
	free := size - inUse
	return free >= defragMinFree && 2*free >= size
}

// defragmentWhenMostlyFree checks the embedded etcd's database every
// interval, the first an interval after the start (not while the API server
// starts up), until ctx ends, and defragments it when worthDefragmenting.
func defragmentWhenMostlyFree(ctx context.Context, cfg *embed.Config, interval time.Duration) error {
	client, err := embeddedEtcdClient(cfg)
	if err != nil {
		return err
	}
	endpoint := cfg.AdvertiseClientUrls[0].String()
	go func() {
		defer client.Close()
		d := defragmenter{client: client, endpoint: endpoint, logger: klog.FromContext(ctx).WithName("etcd-defrag")}
		ticker := time.NewTicker(interval)
		defer ticker.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-ticker.C:
			}
			if err := d.check(ctx); err != nil && ctx.Err() == nil {
				d.logger.Error(err, "checking the embedded etcd's database for free pages")
			}
		}
	}()
	return nil
}

// embeddedEtcdClient connects to the embedded etcd.
func embeddedEtcdClient(cfg *embed.Config) (*clientv3.Client, error) {
	var tlsConfig *tls.Config // the client takes nil for a plain connection
	if !cfg.ClientTLSInfo.Empty() {
		var err error
		// etcd's own certificate (kcp's peer certificate) serves as a client's too.
		if tlsConfig, err = cfg.ClientTLSInfo.ClientConfig(); err != nil {
			return nil, err
		}
	}
	return clientv3.New(clientv3.Config{
		Endpoints: []string{cfg.AdvertiseClientUrls[0].String()}, TLS: tlsConfig, DialTimeout: etcdDialTimeout, Logger: zap.NewNop(),
	})
}

// dialEtcd connects to the hub's etcd: the embedded one when there is one,
// else the API server's, with its certificates.
func dialEtcd(embedded *embeddedetcd.Config, t storagebackend.TransportConfig) (*clientv3.Client, error) {
	if embedded != nil {
		return embeddedEtcdClient(embedded.Config)
	}
	tlsConfig, err := transport.TLSInfo{CertFile: t.CertFile, KeyFile: t.KeyFile, TrustedCAFile: t.TrustedCAFile}.ClientConfig()
	if err != nil {
		return nil, err
	}
	if t.CertFile == "" && t.KeyFile == "" && t.TrustedCAFile == "" {
		tlsConfig = nil
	}
	return clientv3.New(clientv3.Config{Endpoints: t.ServerList, TLS: tlsConfig, DialTimeout: etcdDialTimeout, Logger: zap.NewNop()})
}

type defragmenter struct {
	client   *clientv3.Client
	endpoint string
	logger   klog.Logger
	// tooLarge is whether the last database worth defragmenting had too
	// much in use to do it here (said once, not every minute).
	tooLarge bool
}

func (d *defragmenter) check(ctx context.Context) error {
	before, err := d.status(ctx)
	if err != nil {
		return err
	}
	if !worthDefragmenting(before.DbSize, before.DbSizeInUse) {
		d.tooLarge = false
		return nil
	}
	if before.DbSizeInUse > defragMaxInUse {
		if !d.tooLarge {
			d.logger.Info("the embedded etcd's database is mostly free but has too much in use to defragment it while the hub serves; defragment it at a quiet time with etcdctl defrag (docs/operations.md)",
				"bytes", before.DbSize, "bytesInUse", before.DbSizeInUse, "maxBytesInUse", defragMaxInUse)
		}
		d.tooLarge = true
		return nil
	}
	started := time.Now()
	// No deadline: given up on, etcd would finish it anyway, and the next
	// check would queue a second one behind it.
	if _, err := d.client.Defragment(ctx, d.endpoint); err != nil {
		return err
	}
	took := time.Since(started)
	embeddedEtcdDefrags.Observe(took.Seconds())
	after, err := d.status(ctx)
	if err != nil {
		return err
	}
	d.logger.Info("defragmented the embedded etcd's database", "bytesBefore", before.DbSize, "bytesInUse", before.DbSizeInUse, "bytesAfter", after.DbSize, "took", took)
	return nil
}

func (d *defragmenter) status(ctx context.Context) (*clientv3.StatusResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, statusTimeout)
	defer cancel()
	return d.client.Status(ctx, d.endpoint)
}
