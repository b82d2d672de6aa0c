package server

import (
	"testing"
	"time"
)

// The hub compacts etcd's history every 2 minutes unless told otherwise, and
// what it is told reaches kcp's API server.
func TestEtcdCompactionIntervalReachesTheAPIServer(t *testing.T) {
	for _, interval := range []time.Duration{DefaultOptions().EtcdCompactionInterval, 5 * time.Minute, 0} {
		opts := DefaultOptions()
		opts.RootDir = t.TempDir()
		opts.EtcdCompactionInterval = interval
		o, err := kcpOptions(opts)
		if err != nil {
			t.Fatal(err)
		}
		if got := o.Server.GenericControlPlane.Etcd.StorageConfig.CompactionInterval; got != interval {
			t.Errorf("compaction interval %v, want %v", got, interval)
		}
	}
	if got := DefaultOptions().EtcdCompactionInterval; got != 2*time.Minute {
		t.Errorf("default compaction interval %v, want 2m", got)
	}
}
