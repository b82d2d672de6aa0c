package localcluster

import (
	"os"
	"path/filepath"
	"strings"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// kwokNodeAnnotation marks the nodes kwok simulates; kwok manages only these,
// so a node someone adds by hand is left alone.
const kwokNodeAnnotation = "kwok.x-k8s.io/node"

// controllers are the kube-controller-manager controllers that make workloads
// behave as on a real cluster: rollouts, Jobs, namespace deletion, cascading
// deletion, node taints from readiness, default ServiceAccounts, endpoints.
var controllers = []string{
	"deployment", "replicaset", "statefulset", "daemonset", "job", "cronjob",
	"namespace", "garbagecollector", "nodelifecycle", "serviceaccount",
	"endpoint", "endpointslice", "disruption", "podgc", "ttl-after-finished",
}

// startControlPlane runs etcd and kube-apiserver through envtest and writes
// the admin kubeconfig the other components use.
func (c *Cluster) startControlPlane(opts Options) error {
	etcdLog, err := createLog(opts.Dir, "etcd")
	if err != nil {
		return err
	}
	defer etcdLog.Close()
	apiLog, err := createLog(opts.Dir, "kube-apiserver")
	if err != nil {
		return err
	}
	defer apiLog.Close()

	// envtest creates only the directories it picks itself. It issues the
	// API server's certificates only into an empty one (finding them there,
	// it knows no authority to trust and panics): a cluster started again
	// on its state gets new ones, and a new kubeconfig below.
	certDir := filepath.Join(opts.Dir, "certs")
	if err := os.RemoveAll(certDir); err != nil {
		return err
	}
	if err := os.MkdirAll(certDir, 0o700); err != nil {
		return err
	}
	apiServer := &envtest.APIServer{CertDir: certDir, Out: apiLog, Err: apiLog}
	// envtest disables the ServiceAccount admission plugin because nothing
	// creates default ServiceAccounts there. Here the serviceaccount controller
	// does, and pods should be admitted as on a real cluster, so the API
	// server keeps its default admission plugins.
	apiServer.Configure().Disable("disable-admission-plugins")
	env := &envtest.Environment{
		BinaryAssetsDirectory: opts.BinDir,
		ControlPlane: envtest.ControlPlane{
			Etcd:      &envtest.Etcd{DataDir: filepath.Join(opts.Dir, "etcd"), Out: etcdLog, Err: etcdLog},
			APIServer: apiServer,
		},
	}
	// A failed Start cleans up after itself (and Stop would then panic).
	if _, err := env.Start(); err != nil {
		return err
	}
	c.env = env

	// A user of our own (rather than envtest's in-memory admin config) so
	// that the child processes and Config() share one kubeconfig file.
	user, err := c.env.AddUser(envtest.User{Name: "fleet-member-admin", Groups: []string{"system:masters"}},
		&rest.Config{QPS: 100, Burst: 200})
	if err != nil {
		return err
	}
	kubeconfig, err := user.KubeConfig()
	if err != nil {
		return err
	}
	c.config = user.Config()
	return os.WriteFile(c.KubeconfigPath, kubeconfig, 0o600)
}

// startComponents runs the controller manager, the scheduler and kwok. None of
// them serves anything: no ports to allocate, nothing to collide between
// clusters running side by side.
func (c *Cluster) startComponents(opts Options) error {
	kubeconfig := "--kubeconfig=" + c.KubeconfigPath
	components := []struct {
		name string
		args []string
	}{
		{"kube-controller-manager", []string{kubeconfig,
			"--controllers=" + strings.Join(controllers, ","),
			"--leader-elect=false",
			"--secure-port=0",
			// The defaults (20/30) make namespace deletion and garbage
			// collection crawl; a test cluster's API server can take more.
			"--kube-api-qps=100", "--kube-api-burst=200",
		}},
		{"kube-scheduler", []string{kubeconfig,
			"--leader-elect=false",
			"--secure-port=0",
		}},
		{"kwok", []string{kubeconfig,
			"--config=" + filepath.Join(opts.BinDir, "kwok-stages.yaml"),
			"--manage-all-nodes=false",
			"--manage-nodes-with-annotation-selector=" + kwokNodeAnnotation + "=fake",
		}},
	}
	for _, comp := range components {
		p, err := startProcess(opts.Dir, filepath.Join(opts.BinDir, comp.name), comp.args...)
		if err != nil {
			return err
		}
		c.procs = append(c.procs, p)
	}
	return nil
}

func createLog(dir, name string) (*os.File, error) {
	return os.Create(filepath.Join(dir, name+".log"))
}
