// Package localfleet runs a Fleetplane on this machine from the binaries
// `make build` puts in bin/: the hub (one fleet-hub process, or shards behind
// a front-proxy), an external etcd when asked, and local member clusters
// (internal/localcluster) joined with `kubectl fleet join --run`. The e2e
// suites (test/e2e/framework), test/scale and cmd/fleet-dev share it; it
// knows nothing of Ginkgo: every call returns its error.
package localfleet

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kcp-dev/logicalcluster/v3"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// BinDir is where `make build` puts the binaries: FLEET_BIN_DIR (the
// Makefile passes it in), else the directory of the running program when
// the hub's binary is there too (bin/fleet-dev run from anywhere), else the
// bin directory of the source tree around the working directory.
func BinDir() string {
	if d := os.Getenv("FLEET_BIN_DIR"); d != "" {
		return d
	}
	if exe, err := os.Executable(); err == nil {
		if dir := filepath.Dir(exe); fileExists(filepath.Join(dir, "fleet-hub")) {
			return dir
		}
	}
	wd, _ := os.Getwd()
	for dir := wd; dir != "/"; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "cmd", "fleet-hub")); err == nil {
			return filepath.Join(dir, "bin")
		}
	}
	return "bin"
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// HubOptions are the knobs of a hub.
type HubOptions struct {
	// RootDir holds the hub's state; a restart with the same dir keeps it.
	RootDir string
	// EtcdServers runs the hub on an external etcd instead of the embedded one.
	EtcdServers []string
	// Args are further fleet-hub start flags.
	Args []string
	// Port is the hub's HTTPS port; 0 picks a free one.
	Port int
}

// Hub is a running fleet-hub process.
type Hub struct {
	opts     HubOptions
	port     int
	etcdPort int
	// metricsPort serves the hub's /metrics (and pprof) on loopback.
	metricsPort int
	cmd         *exec.Cmd
	exited      chan error
	LogPath     string
	// Admin is an admin config for the kcp base URL (no workspace path).
	Admin *rest.Config
	// shards are the processes of a hub of several shards seen through
	// its front-proxy (ShardedHub.Hub); the process methods act on them.
	shards []*Hub
}

// StartHub starts fleet-hub on free ports and waits until /readyz is ok, which
// includes the fleet bootstrap.
func StartHub(ctx context.Context, opts HubOptions) (*Hub, error) {
	h, err := LaunchHub(opts)
	if err != nil {
		return nil, err
	}
	return h, h.WaitReady(ctx)
}

// LaunchHub starts fleet-hub on free ports without waiting for it.
func LaunchHub(opts HubOptions) (*Hub, error) {
	ports, err := FreePorts(4)
	if err != nil {
		return nil, err
	}
	h := &Hub{opts: opts, port: ports[0], etcdPort: ports[1], metricsPort: ports[3], LogPath: filepath.Join(opts.RootDir, "hub.log")}
	if opts.Port != 0 {
		h.port = opts.Port
	}
	if err := os.MkdirAll(opts.RootDir, 0o700); err != nil {
		return nil, err
	}
	return h, h.launch(ports[2])
}

func (h *Hub) launch(peerPort int) error {
	args := []string{"start",
		"--root-dir", h.opts.RootDir,
		"--secure-port", strconv.Itoa(h.port),
		"--embedded-etcd-client-port", strconv.Itoa(h.etcdPort),
		"--embedded-etcd-peer-port", strconv.Itoa(peerPort),
		"--metrics-bind-address", "127.0.0.1:" + strconv.Itoa(h.metricsPort), "--profiling",
	}
	for _, s := range h.opts.EtcdServers {
		args = append(args, "--etcd-servers", s)
	}
	args = append(args, h.opts.Args...)
	log, err := os.OpenFile(h.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer log.Close()
	// After a restart the file still holds the last run's admin token until
	// kcp rewrites it; WaitReady re-reads it until the new one works. (kcp
	// also keeps the shard-admin token there, so the file must not be removed.)
	h.cmd = exec.Command(filepath.Join(BinDir(), "fleet-hub"), args...)
	h.cmd.Stdout, h.cmd.Stderr = log, log
	h.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// Fewer fsyncs make the hub start faster; durability is not under test.
	h.cmd.Env = append(os.Environ(), "UNSAFE_E2E_HACK_DISABLE_ETCD_FSYNC=true")
	if err := h.cmd.Start(); err != nil {
		return fmt.Errorf("starting fleet-hub: %w", err)
	}
	h.exited = make(chan error, 1)
	go func() { h.exited <- h.cmd.Wait() }()
	return nil
}

// Pid is the hub process's id, 0 when it is not running.
func (h *Hub) Pid() int {
	if h.shards != nil {
		return h.shards[0].Pid()
	}
	if h.cmd == nil || h.cmd.Process == nil {
		return 0
	}
	return h.cmd.Process.Pid
}

// Addr is the host:port the hub serves on (the same after a restart).
func (h *Hub) Addr() string { return "127.0.0.1:" + strconv.Itoa(h.port) }

// MetricsURL is where the hub serves its Prometheus metrics; pprof is under
// /debug/pprof/ next to it.
func (h *Hub) MetricsURL() string {
	if h.shards != nil {
		return h.shards[0].MetricsURL()
	}
	return "http://127.0.0.1:" + strconv.Itoa(h.metricsPort) + "/metrics"
}

// APIServerMetrics returns what the hub's API server reports at /metrics
// (kcp's metrics, which only the shard admin may read).
func (h *Hub) APIServerMetrics(ctx context.Context) (string, error) {
	cfg, err := h.baseConfig("system:admin")
	if err != nil {
		return "", err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return "", err
	}
	raw, err := dc.RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	return string(raw), err
}

// EmbeddedEtcd is the client URL of the hub's embedded etcd and the
// directory of its TLS files (ca/cert.pem; peer/cert.pem and key.pem also
// serve as a client certificate); empty with an external etcd.
func (h *Hub) EmbeddedEtcd() (url, secrets string) {
	if len(h.opts.EtcdServers) > 0 {
		return "", ""
	}
	return "https://localhost:" + strconv.Itoa(h.etcdPort), filepath.Join(h.opts.RootDir, "etcd-server", "secrets")
}

// KubeconfigPath is the admin kubeconfig the hub writes.
func (h *Hub) KubeconfigPath() string { return filepath.Join(h.opts.RootDir, "admin.kubeconfig") }

// Ready tells whether the hub serves /readyz now.
func (h *Hub) Ready(ctx context.Context) bool {
	ok, _ := h.checkReady(ctx)
	return ok
}

// WaitReady waits until the hub serves /readyz, which includes the fleet
// bootstrap.
func (h *Hub) WaitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	var lastErr error
	err := wait.PollUntilContextCancel(ctx, 250*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		select {
		case err := <-h.exited:
			return false, fmt.Errorf("fleet-hub exited before becoming ready (%v); see %s", err, h.LogPath)
		default:
		}
		var ok bool
		ok, lastErr = h.checkReady(ctx)
		return ok, nil
	})
	if err != nil {
		return fmt.Errorf("hub not ready: %w (last: %v); see %s", err, lastErr, h.LogPath)
	}
	return nil
}

// checkReady asks /readyz once, with the admin kubeconfig the hub wrote, and
// remembers the admin config when the hub is ready.
func (h *Hub) checkReady(ctx context.Context) (bool, error) {
	base, err := h.baseConfig("")
	if err != nil {
		return false, err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(base)
	if err != nil {
		return false, err
	}
	if err := dc.RESTClient().Get().AbsPath("/readyz").Do(ctx).Error(); err != nil {
		return false, err
	}
	h.Admin = base
	return true, nil
}

// baseConfig reads a context of the admin kubeconfig ("" for the current
// one) and points it at the kcp base URL.
func (h *Hub) baseConfig(kubeContext string) (*rest.Config, error) {
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: h.KubeconfigPath()},
		&clientcmd.ConfigOverrides{CurrentContext: kubeContext}).ClientConfig()
	if err != nil {
		return nil, err
	}
	cfg.Host = BaseURL(cfg.Host)
	return cfg, nil
}

// BaseURL is a hub URL without its workspace path: the kcp base URL.
func BaseURL(host string) string {
	if i := strings.Index(host, "/clusters/"); i >= 0 {
		return host[:i]
	}
	return host
}

// ShardAdmin returns a config of kcp's shard admin (system:masters) for a
// logical cluster, such as system:bound-crds, that no workspace path names.
// It works from the moment kcp has written its kubeconfig.
func (h *Hub) ShardAdmin(cluster string) (*rest.Config, error) {
	cfg, err := h.baseConfig("system:admin")
	if err != nil {
		return nil, err
	}
	cfg.Host += logicalcluster.NewPath(cluster).RequestPath()
	return cfg, nil
}

// Stop sends SIGTERM and waits for a clean exit.
func (h *Hub) Stop() error {
	if h.shards != nil {
		return (&ShardedHub{Shards: h.shards}).Stop()
	}
	if h.cmd == nil || h.cmd.Process == nil {
		return nil
	}
	_ = h.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-h.exited:
		h.cmd = nil
		return err
	case <-time.After(90 * time.Second):
		_ = syscall.Kill(-h.cmd.Process.Pid, syscall.SIGKILL)
		_ = exitOf(h.exited) // killed: the error says so
		h.cmd = nil
		return fmt.Errorf("fleet-hub did not stop within 90s after SIGTERM; killed")
	}
}

// exitOf waits for a process to exit and returns how it did.
func exitOf(exited <-chan error) error { return <-exited }

// Kill stops the hub with SIGKILL, as a crash would.
func (h *Hub) Kill() {
	for _, s := range h.shards {
		s.Kill()
	}
	if h.cmd == nil || h.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-h.cmd.Process.Pid, syscall.SIGKILL)
	_ = exitOf(h.exited) // killed: the error says so
	h.cmd = nil
}

// Restart stops the hub and starts it again on the same ports and state.
func (h *Hub) Restart(ctx context.Context) error {
	if err := h.Stop(); err != nil {
		return err
	}
	return h.Start(ctx)
}

// RestartWith restarts the hub with args as its further start flags.
func (h *Hub) RestartWith(ctx context.Context, args ...string) error {
	if err := h.Stop(); err != nil {
		return err
	}
	h.opts.Args = args
	return h.Start(ctx)
}

// Start starts a stopped hub again on its API and etcd client ports.
func (h *Hub) Start(ctx context.Context) error {
	for _, s := range h.shards {
		if err := s.Start(ctx); err != nil {
			return err
		}
	}
	if h.shards != nil {
		return nil
	}
	if err := h.Launch(); err != nil {
		return err
	}
	return h.WaitReady(ctx)
}

// Launch starts the stopped hub's process without waiting for it to serve.
func (h *Hub) Launch() error {
	ports, err := FreePorts(1)
	if err != nil {
		return err
	}
	return h.launch(ports[0])
}

// Config returns an admin config for the workspace at path (e.g. "root:fleet").
func (h *Hub) Config(path string) *rest.Config {
	cfg := rest.CopyConfig(h.Admin)
	cfg.Host += logicalcluster.NewPath(path).RequestPath()
	cfg.QPS, cfg.Burst = 50, 100
	return cfg
}

// FreePorts asks the kernel for n distinct free TCP ports on loopback.
func FreePorts(n int) ([]int, error) {
	var ports []int
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
