package localfleet

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
)

// ShardedHubOptions lay out a hub of several shards on this machine.
type ShardedHubOptions struct {
	// Dir holds each process's state: root/, shard-1/, ..., front-proxy/
	// and the authorities they share (pki/).
	Dir string
	// Shards counts the shards, the root shard included (2 or more).
	Shards int
	// Port is the front-proxy's HTTPS port, the one clients use; the
	// shards serve on the ports after it. 0 picks free ports.
	Port int
	// Args are further fleet-hub start flags for every shard.
	Args []string
}

// ShardedHub is a hub of several fleet-hub shard processes behind a
// fleet-hub front-proxy.
type ShardedHub struct {
	// Shards are the shard processes, the root shard first; Shards[i]
	// for i > 0 is named shard-<i>.
	Shards []*Hub
	Proxy  *FrontProxy
}

// StartShardedHub starts the root shard, the front-proxy and the further
// shards, and waits until each is ready. On error, what started is
// stopped and s is nil.
func StartShardedHub(ctx context.Context, opts ShardedHubOptions) (s *ShardedHub, err error) {
	if opts.Shards < 2 {
		return nil, fmt.Errorf("a sharded hub needs 2 shards or more, not %d", opts.Shards)
	}
	ports, err := shardedPorts(opts)
	if err != nil {
		return nil, err
	}
	url := func(port int) string { return "https://127.0.0.1:" + strconv.Itoa(port) }
	pki := filepath.Join(opts.Dir, "pki")
	proxyPort := ports[len(ports)-1]
	shared := append([]string{"--shared-pki-dir", pki, "--external-url", url(proxyPort)}, opts.Args...)
	s = &ShardedHub{}
	defer func() {
		if err != nil {
			_ = s.Stop()
			s = nil
		}
	}()
	// The root shard is ready once its fleet workspaces are, which kcp
	// creates through the front-proxy: start both, then wait.
	root, err := LaunchHub(HubOptions{RootDir: filepath.Join(opts.Dir, "root"), Port: ports[0],
		Args: append([]string{"--shard-base-url", url(ports[0])}, shared...)})
	if err != nil {
		return s, err
	}
	s.Shards = append(s.Shards, root)
	s.Proxy, err = StartFrontProxy(ctx, FrontProxyOptions{RootDir: filepath.Join(opts.Dir, "front-proxy"), PKIDir: pki,
		RootShardURL: url(ports[0]), Port: proxyPort})
	if err != nil {
		return s, err
	}
	if err := root.WaitReady(ctx); err != nil {
		return s, err
	}
	for i := 1; i < opts.Shards; i++ {
		name := ShardName(i)
		shard, err := StartHub(ctx, HubOptions{RootDir: filepath.Join(opts.Dir, name), Port: ports[i],
			Args: append([]string{"--shard-name", name, "--root-shard-url", url(ports[0]), "--shard-base-url", url(ports[i])}, shared...)})
		if shard != nil {
			s.Shards = append(s.Shards, shard)
		}
		if err != nil {
			return s, fmt.Errorf("starting %s: %w", name, err)
		}
	}
	return s, nil
}

// ShardName is the name of the i-th shard of a hub StartShardedHub
// starts: root, then shard-1, shard-2...
func ShardName(i int) string {
	if i == 0 {
		return "root"
	}
	return "shard-" + strconv.Itoa(i)
}

// shardedPorts are the shards' ports, then the front-proxy's.
func shardedPorts(opts ShardedHubOptions) ([]int, error) {
	if opts.Port == 0 {
		return FreePorts(opts.Shards + 1)
	}
	ports := make([]int, 0, opts.Shards+1)
	for i := 1; i <= opts.Shards; i++ {
		ports = append(ports, opts.Port+i)
	}
	return append(ports, opts.Port), nil
}

// Hub is the hub as its clients see it, through the front-proxy. Its
// process methods act on every shard: Kill and Stop end them all, Start
// starts them again (the root shard first); MetricsURL, Usage and
// Goroutines are the root shard's.
func (s *ShardedHub) Hub() *Hub {
	h := s.Proxy.Hub()
	h.shards = s.Shards
	return h
}

// Stop ends the shards, the further ones first, and the front-proxy.
func (s *ShardedHub) Stop() error {
	var errs []error
	for i := len(s.Shards) - 1; i >= 0; i-- {
		errs = append(errs, s.Shards[i].Stop())
	}
	if s.Proxy != nil {
		s.Proxy.Stop()
	}
	return errors.Join(errs...)
}
