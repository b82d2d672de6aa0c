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

// Default returns the default profile. Plugins, and so filters, run cheapest
// and most fundamental first, so a rejected cluster reports the most basic
// reason.
func Default() *framework.Profile {
	return framework.NewProfile(DefaultName).WithPlugins(
		clustereligibility.New(),
		tenantgrant.New(),
		sameplacementaffinity.New(),
		namespaceaffinity.New(),
		tainttoleration.New(),
		clusteraffinity.New(),
		topologyspreadconstraints.New(),
	)
}

// NewDefaultFramework returns a framework with the default profile.
func NewDefaultFramework() *framework.Framework { return framework.New(Default()) }
