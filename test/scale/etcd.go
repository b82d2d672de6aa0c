package main

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/fleetplane/fleetplane/internal/localfleet"
)

// etcdBytes is what the hub keeps in etcd now, per resource: the bytes of
// every key and value at the current revision (no history), read from the
// embedded etcd.
func etcdBytes(ctx context.Context, h *localfleet.Hub) (map[string]int64, error) {
	c, err := etcdClient(h)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	sizes := map[string]int64{}
	from := "\x00"
	for {
		resp, err := c.Get(ctx, from, clientv3.WithFromKey(), clientv3.WithLimit(1000))
		if err != nil {
			return nil, err
		}
		for _, kv := range resp.Kvs {
			sizes[resourceOf(string(kv.Key))] += int64(len(kv.Key) + len(kv.Value))
		}
		if !resp.More || len(resp.Kvs) == 0 {
			return sizes, nil
		}
		from = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
}

// etcdFile returns the size of the embedded etcd's database file and how
// much of it is in use (the rest are pages compactions freed).
func etcdFile(ctx context.Context, h *localfleet.Hub) (size, inUse int64, err error) {
	c, err := etcdClient(h)
	if err != nil {
		return 0, 0, err
	}
	defer c.Close()
	url, _ := h.EmbeddedEtcd()
	s, err := c.Status(ctx, url)
	if err != nil {
		return 0, 0, err
	}
	return s.DbSize, s.DbSizeInUse, nil
}

// etcdClient connects to the hub's embedded etcd as its peer.
func etcdClient(h *localfleet.Hub) (*clientv3.Client, error) {
	url, secrets := h.EmbeddedEtcd()
	if url == "" {
		return nil, fmt.Errorf("etcd sizes need the embedded etcd")
	}
	tlsInfo := transport.TLSInfo{
		CertFile:      filepath.Join(secrets, "peer", "cert.pem"),
		KeyFile:       filepath.Join(secrets, "peer", "key.pem"),
		TrustedCAFile: filepath.Join(secrets, "ca", "cert.pem"),
	}
	tlsConfig, err := tlsInfo.ClientConfig()
	if err != nil {
		return nil, err
	}
	return clientv3.New(clientv3.Config{Endpoints: []string{url}, TLS: tlsConfig, DialTimeout: 10 * time.Second})
}

// resourceOf names the resource of an API server key: /registry/configmaps/…
// or /registry/<group>/<resource>/….
func resourceOf(key string) string {
	parts := strings.Split(strings.TrimPrefix(key, "/registry/"), "/")
	if len(parts) > 1 && strings.Contains(parts[0], ".") {
		return parts[0] + "/" + parts[1]
	}
	return parts[0]
}

// logGrowth logs how much each resource grew between two size maps, the
// largest first, and returns the total growth.
func logGrowth(before, after map[string]int64, pairs int) int64 {
	type growth struct {
		resource string
		bytes    int64
	}
	var grown []growth
	var total int64
	for r, b := range after {
		if d := b - before[r]; d != 0 {
			grown = append(grown, growth{r, d})
			total += d
		}
	}
	sort.Slice(grown, func(i, j int) bool { return grown[i].bytes > grown[j].bytes })
	for _, g := range grown {
		if g.bytes*100 >= total {
			logf("etcd bytes per placement-cluster pair: %-55s %8.0f", g.resource, float64(g.bytes)/float64(pairs))
		}
	}
	return total
}
