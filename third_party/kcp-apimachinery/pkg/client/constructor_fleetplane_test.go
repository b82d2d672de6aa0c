/*
Copyright 2026 The Fleetplane Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package client

import (
	"net/http"
	"testing"
	"time"

	"github.com/kcp-dev/logicalcluster/v3"

	"k8s.io/client-go/rest"
)

type scopedClient struct{ host string }

func TestCacheDropsIdleClients(t *testing.T) {
	defer func(idle time.Duration) { clientIdleTime = idle }(clientIdleTime)
	clientIdleTime = 300 * time.Millisecond
	cache := NewCache(&rest.Config{Host: "https://hub"}, http.DefaultClient, &Constructor[*scopedClient]{
		NewForConfigAndClient: func(cfg *rest.Config, _ *http.Client) (*scopedClient, error) {
			return &scopedClient{host: cfg.Host}, nil
		},
	})
	team, platform := logicalcluster.NewPath("root:team"), logicalcluster.NewPath("root:platform")
	first := cache.ClusterOrDie(team)
	if first.host != "https://hub/clusters/root:team" {
		t.Fatalf("the client is for %s", first.host)
	}
	if cache.ClusterOrDie(team) != first {
		t.Fatal("a client asked for again is made anew")
	}
	inUse := cache.ClusterOrDie(platform)
	// platform's client is asked for again and again, team's is left idle.
	deadline := time.Now().Add(1500 * time.Millisecond)
	for time.Now().Before(deadline) {
		if cache.ClusterOrDie(platform) != inUse {
			t.Fatal("a client asked for within its idle time was dropped")
		}
		time.Sleep(20 * time.Millisecond)
	}
	cached := cache.(*clientCache[*scopedClient])
	cached.RLock()
	_, kept := cached.clientsByClusterPath[team]
	cached.RUnlock()
	if kept {
		t.Fatal("an idle client stays cached")
	}
	if cache.ClusterOrDie(team) == first {
		t.Fatal("an idle client was not dropped")
	}
}
