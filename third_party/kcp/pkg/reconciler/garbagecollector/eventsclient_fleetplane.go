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

package garbagecollector

// Fleetplane: this file is not kcp-dev's.

import (
	"k8s.io/client-go/kubernetes"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"

	kcpkubernetesclient "github.com/kcp-dev/client-go/kubernetes"
	"github.com/kcp-dev/logicalcluster/v3"
)

// eventsClientset is the Kubernetes client a logical cluster's garbage
// collector gets. The collector only records events with it (through
// CoreV1), yet kcp handed it a full clientset: some fifty REST clients,
// about 90 KB, held for as long as the workspace lives. Any other group's
// client is nil; the collector asks for none.
type eventsClientset struct {
	kubernetes.Interface
	core corev1client.CoreV1Interface
}

func newEventsClientset(c kcpkubernetesclient.ClusterInterface, path logicalcluster.Path) kubernetes.Interface {
	return eventsClientset{core: c.CoreV1().Cluster(path)}
}

func (c eventsClientset) CoreV1() corev1client.CoreV1Interface { return c.core }
