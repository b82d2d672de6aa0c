// Package localcluster starts real, local Kubernetes member clusters for tests
// and `make run`: etcd and kube-apiserver through controller-runtime's envtest,
// plus kube-controller-manager, kube-scheduler and kwok as child processes, so
// that Deployments roll out, Jobs complete and namespaces really go away on
// nodes that kwok simulates. All binaries come from `make cluster-bins`.
package localcluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// readyTimeout bounds how long Start waits for the cluster to become usable
// when the caller's context has no earlier deadline.
const readyTimeout = 2 * time.Minute

// Options describe one member cluster.
type Options struct {
	// Name identifies the cluster in errors and names its StartMany directory.
	Name string
	// Nodes are the kwok-simulated nodes to create.
	Nodes []NodeSpec
	// BinDir holds etcd, kube-apiserver, kube-controller-manager,
	// kube-scheduler, kwok and kwok-stages.yaml. envtest lets the
	// KUBEBUILDER_ASSETS and TEST_ASSET_* variables override it for etcd and
	// kube-apiserver.
	BinDir string
	// Dir receives the cluster's state (etcd/, certs/), one log per process
	// (<binary>.log) and admin.kubeconfig.
	Dir string
}

// Cluster is a running member cluster.
type Cluster struct {
	Name string
	// KubeconfigPath is a cluster-admin kubeconfig file inside Options.Dir.
	KubeconfigPath string

	dir    string
	env    *envtest.Environment
	config *rest.Config
	procs  []*process
}

// Config returns a cluster-admin client config (the same identity as the
// kubeconfig file).
func (c *Cluster) Config() *rest.Config { return rest.CopyConfig(c.config) }

// Start brings a cluster up and returns once every node is Ready and
// schedulable and the default ServiceAccount exists, i.e. once pods can run.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	nodes, err := buildNodes(opts.Nodes)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", opts.Name, err)
	}
	if err := os.MkdirAll(opts.Dir, 0o700); err != nil {
		return nil, err
	}
	c := &Cluster{Name: opts.Name, KubeconfigPath: filepath.Join(opts.Dir, "admin.kubeconfig"), dir: opts.Dir}
	if err := c.start(ctx, opts, nodes); err != nil {
		// Keep the start error; Stop errors of a half-started cluster add nothing.
		_ = c.Stop()
		return nil, fmt.Errorf("cluster %s: %w (logs in %s)", opts.Name, err, opts.Dir)
	}
	return c, nil
}

func (c *Cluster) start(ctx context.Context, opts Options, nodes []*corev1.Node) error {
	if err := c.startControlPlane(opts); err != nil {
		return err
	}
	if err := c.startComponents(opts); err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(c.config)
	if err != nil {
		return err
	}
	if err := createNodes(ctx, cs, nodes); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	return c.waitUsable(ctx, cs, nodes)
}

// StopAPIServer kills the cluster's API server alone, as in a crash (a
// graceful stop waits for open watches): etcd and the other components keep
// running.
func (c *Cluster) StopAPIServer(ctx context.Context) error {
	pid, err := c.apiServerPid()
	if err != nil {
		return err
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return err
	}
	// Once envtest has seen the exit, Stop only resets its state.
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return c.env.ControlPlane.APIServer.Stop() == nil, nil
	})
}

// apiServerPid finds the cluster's kube-apiserver process by the certificate
// directory on its command line (envtest does not expose it).
func (c *Cluster) apiServerPid() (int, error) {
	certDir := "--cert-dir=" + filepath.Join(c.dir, "certs")
	cmdlines, err := filepath.Glob("/proc/[0-9]*/cmdline")
	if err != nil {
		return 0, err
	}
	for _, path := range cmdlines {
		raw, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		args := strings.Split(string(raw), "\x00")
		if filepath.Base(args[0]) == "kube-apiserver" && slices.Contains(args, certDir) {
			return strconv.Atoi(filepath.Base(filepath.Dir(path)))
		}
	}
	return 0, fmt.Errorf("cluster %s: no kube-apiserver process with %s", c.Name, certDir)
}

// StartAPIServer starts the API server again after StopAPIServer, on the
// same port, with the same certificates and data: clients reconnect as to
// a restarted server. Its log continues in kube-apiserver.log.
func (c *Cluster) StartAPIServer() error {
	api := c.env.ControlPlane.APIServer
	log, err := os.OpenFile(filepath.Join(c.dir, "kube-apiserver.log"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	// The child writes to its own copy of the descriptor.
	defer log.Close()
	api.Out, api.Err = log, log
	return api.Start()
}

// Stop kills the cluster's processes; its Dir is left for inspection.
func (c *Cluster) Stop() error {
	var errs []error
	// Reverse start order: clients first, then the API server and etcd.
	for i := len(c.procs) - 1; i >= 0; i-- {
		errs = append(errs, c.procs[i].stop())
	}
	c.procs = nil
	if c.env != nil {
		errs = append(errs, c.env.Stop())
		c.env = nil
	}
	return errors.Join(errs...)
}

// StartMany starts the clusters one after another: each start is CPU-bound
// (mostly the API server's boot), so starting them together finishes no
// sooner on a small machine. Dir defaults to baseDir/<Name> and BinDir to
// binDir. On error the clusters already started are stopped.
func StartMany(ctx context.Context, baseDir, binDir string, specs []Options) ([]*Cluster, error) {
	var clusters []*Cluster
	for _, opts := range specs {
		if opts.Dir == "" {
			opts.Dir = filepath.Join(baseDir, opts.Name)
		}
		if opts.BinDir == "" {
			opts.BinDir = binDir
		}
		c, err := Start(ctx, opts)
		if err != nil {
			for _, started := range clusters {
				_ = started.Stop()
			}
			return nil, err
		}
		clusters = append(clusters, c)
	}
	return clusters, nil
}
