// Package profile assembles the default scheduler profile from the in-tree
// plugins (it lives apart from the framework, which the plugins import).
package profile

import (
	"github.com/fleetplane/fleetplane/controllers/scheduler/framework"
	"github.com/fleetplane/fleetplane/controllers/scheduler/plugins/clusteraffinity"
	"github.com/fleetplane/fleetplane/controllers/scheduler/plugins/clustereligibility"
	"github.com/fleetplane/fleetplane/controllers/scheduler/plugins/namespaceaffinity"
	"github.com/fleetplane/fleetplane/controllers/scheduler/plugins/sameplacementaffinity"
	"github.com/fleetplane/fleetplane/controllers/scheduler/plugins/tainttoleration"
	"github.com/fleetplane/fleetplane/controllers/scheduler/plugins/tenantgrant"
	"github.com/fleetplane/fleetplane/controllers/scheduler/plugins/topologyspreadconstraints"
)

// DefaultName is the name of the default profile.
const DefaultName = "default"

// Default returns the default profile. Filters run cheapest and most
// fundamental first, so a rejected cluster reports the most basic reason.
func Default() *framework.Profile {
	affinity := clusteraffinity.New()
	eligibility := clustereligibility.New()
	grant := tenantgrant.New()
	namespace := namespaceaffinity.New()
	same := sameplacementaffinity.New()
	taint := tainttoleration.New()
	spread := topologyspreadconstraints.New()
	return framework.NewProfile(DefaultName).
		WithPostBatchPlugin(spread).
		WithPreFilterPlugin(affinity).
		WithPreFilterPlugin(namespace).
		WithPreFilterPlugin(taint).
		WithPreFilterPlugin(spread).
		WithFilterPlugin(eligibility).
		WithFilterPlugin(grant).
		WithFilterPlugin(same).
		WithFilterPlugin(namespace).
		WithFilterPlugin(taint).
		WithFilterPlugin(affinity).
		WithFilterPlugin(spread).
		WithPreScorePlugin(affinity).
		WithPreScorePlugin(spread).
		WithScorePlugin(affinity).
		WithScorePlugin(same).
		WithScorePlugin(spread).
		WithReservePlugin(spread).
		WithRetainPlugin(eligibility).
		WithRetainPlugin(grant)
}

// NewDefaultFramework returns a framework with the default profile.
func NewDefaultFramework() *framework.Framework { return framework.New(Default()) }
