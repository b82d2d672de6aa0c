package server

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// etcd's database file grows to the most its data and the history kept
// until the next compaction ever took, and never shrinks: pages freed by
// deletions and compactions are reused, not given back. Once workspaces or
// a large fleet have come and gone, the hub keeps mapping a file that is
// mostly free. A defragmentation rewrites the file without the free pages;
// it blocks the embedded etcd while it copies what is in use (tens of
// milliseconds for tens of MB here), so the hub does it only when at least
// half the file and defragMinFree are free.
const (
	defragMinFree       = 32 << 20
	defragCheckInterval = time.Minute
	defragTimeout       = 5 * time.Minute
)

var embeddedEtcdDefrags = prometheus.NewHistogram(prometheus.HistogramOpts{
	Name:    "fleet_embedded_etcd_defragmentation_duration_seconds",
	Help:    "How long defragmenting the embedded etcd's database took (the hub does when most of the file is free); etcd serves nothing meanwhile.",
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
// interval until ctx ends, and defragments it when worthDefragmenting.
func defragmentWhenMostlyFree(ctx context.Context, cfg *embed.Config, interval time.Duration) error {
	tlsConfig, err := transport.TLSInfo{
		CertFile: cfg.ClientTLSInfo.CertFile, KeyFile: cfg.ClientTLSInfo.KeyFile,
		TrustedCAFile: cfg.ClientTLSInfo.TrustedCAFile, ServerName: cfg.ClientTLSInfo.ServerName,
	}.ClientConfig()
	if err != nil {
		return err
	}
	if cfg.ClientTLSInfo.Empty() {
		tlsConfig = nil
	}
	endpoint := cfg.AdvertiseClientUrls[0].String()
	client, err := clientv3.New(clientv3.Config{
		Endpoints: []string{endpoint}, TLS: tlsConfig, DialTimeout: etcdDialTimeout, Logger: zap.NewNop(),
	})
	if err != nil {
		return err
	}
	go func() {
		defer client.Close()
		logger := klog.FromContext(ctx).WithName("etcd-defrag")
		wait.UntilWithContext(ctx, func(ctx context.Context) {
			if err := defragmentIfWorth(ctx, client, endpoint, logger); err != nil && ctx.Err() == nil {
				logger.Error(err, "checking the embedded etcd's database for free pages")
			}
		}, interval)
	}()
	return nil
}

func defragmentIfWorth(ctx context.Context, client *clientv3.Client, endpoint string, logger klog.Logger) error {
	ctx, cancel := context.WithTimeout(ctx, defragTimeout)
	defer cancel()
	status, err := client.Status(ctx, endpoint)
	if err != nil {
		return err
	}
	if !worthDefragmenting(status.DbSize, status.DbSizeInUse) {
		return nil
	}
	started := time.Now()
	if _, err := client.Defragment(ctx, endpoint); err != nil {
		return err
	}
	took := time.Since(started)
	embeddedEtcdDefrags.Observe(took.Seconds())
	after, err := client.Status(ctx, endpoint)
	if err != nil {
		return err
	}
	logger.Info("defragmented the embedded etcd's database", "bytesBefore", status.DbSize, "bytesInUse", status.DbSizeInUse, "bytesAfter", after.DbSize, "took", took)
	return nil
}
