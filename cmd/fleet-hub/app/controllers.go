package app

import (
	"context"
	"fmt"
	"time"

	"github.com/kcp-dev/logicalcluster/v3"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	fleetconfig "github.com/fleetplane/fleetplane/config/fleet"
	"github.com/fleetplane/fleetplane/controllers/membercluster"
)

// controllerOptions are the hub controllers' settings.
type controllerOptions struct {
	UnhealthyThreshold time.Duration
	ForceDeleteWait    time.Duration
}

func defaultControllerOptions() controllerOptions {
	return controllerOptions{
		UnhealthyThreshold: membercluster.DefaultUnhealthyThreshold,
		ForceDeleteWait:    membercluster.DefaultForceDeleteWait,
	}
}

func hubScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, clusterv1beta1.AddToScheme, placementv1beta1.AddToScheme} {
		if err := add(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// startControllers runs the controllers of the platform workspace until ctx
// ends. It returns once they are set up; errors afterwards are logged.
func startControllers(ctx context.Context, loopback *rest.Config, opts controllerOptions) error {
	cfg := rest.CopyConfig(loopback)
	cfg.Host += logicalcluster.NewPath(fleetconfig.Path).RequestPath()
	scheme, err := hubScheme()
	if err != nil {
		return err
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Logger:                 klog.FromContext(ctx).WithName("controllers"),
	})
	if err != nil {
		return fmt.Errorf("creating the controller manager for %s: %w", fleetconfig.Path, err)
	}
	mc := &membercluster.Reconciler{
		Client:             mgr.GetClient(),
		Recorder:           mgr.GetEventRecorderFor(membercluster.ControllerName),
		UnhealthyThreshold: opts.UnhealthyThreshold,
		ForceDeleteWait:    opts.ForceDeleteWait,
	}
	if err := mc.SetupWithManager(mgr); err != nil {
		return err
	}
	go func() {
		if err := mgr.Start(ctx); err != nil {
			klog.FromContext(ctx).Error(err, "hub controllers stopped")
		}
	}()
	return nil
}
