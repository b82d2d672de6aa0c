// Package memberdefaults is the hub's admission plugin that gives a new
// MemberCluster what the member cluster controller would otherwise add with
// a write of its own right after the create: the cleanup finalizer and the
// member-name label. A create then costs the hub one write less, and the
// one client that creates a thousand members one after another does not
// wait behind those writes. The controller still adds both to a
// MemberCluster that lacks them (one created before the plugin, or a label
// removed later).
package memberdefaults

import (
	"context"
	"io"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/admission"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
)

// PluginName is the plugin's name in the hub's admission chain.
const PluginName = "fleetplane.io/MemberClusterDefaults"

// Plugin is the admission plugin.
type Plugin struct {
	*admission.Handler
}

var _ admission.MutationInterface = &Plugin{}

// New returns the plugin.
func New() *Plugin {
	return &Plugin{Handler: admission.NewHandler(admission.Create)}
}

// Factory registers the plugin in an admission plugin registry.
func (p *Plugin) Factory(io.Reader) (admission.Interface, error) { return p, nil }

// Admit adds the finalizer and the label to a MemberCluster being created.
// A name still to be generated gets its label from the controller.
func (p *Plugin) Admit(_ context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	gvr := a.GetResource()
	if gvr.Group != clusterv1beta1.GroupVersion.Group || gvr.Resource != "memberclusters" || a.GetSubresource() != "" {
		return nil
	}
	if mc, ok := a.GetObject().(metav1.Object); ok {
		clusterv1beta1.SetFinalizerAndNameLabel(mc)
	}
	return nil
}
