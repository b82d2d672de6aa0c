package localfleet

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// FrontProxyOptions are the settings of a front-proxy.
type FrontProxyOptions struct {
	RootDir      string
	PKIDir       string
	RootShardURL string
	Port         int
}

// FrontProxy is a running `fleet-hub front-proxy` process.
type FrontProxy struct {
	opts    FrontProxyOptions
	cmd     *exec.Cmd
	exited  chan error
	LogPath string
	// Admin is the hub admin's config at the front-proxy's base URL.
	Admin *rest.Config
}

// StartFrontProxy starts the front-proxy and waits until it routes
// requests to the root shard.
func StartFrontProxy(ctx context.Context, opts FrontProxyOptions) (*FrontProxy, error) {
	if err := os.MkdirAll(opts.RootDir, 0o700); err != nil {
		return nil, err
	}
	p := &FrontProxy{opts: opts, LogPath: filepath.Join(opts.RootDir, "front-proxy.log")}
	log, err := os.OpenFile(p.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	defer log.Close()
	p.cmd = exec.Command(filepath.Join(BinDir(), "fleet-hub"), "front-proxy", "--root-dir", opts.RootDir,
		"--shared-pki-dir", opts.PKIDir, "--root-shard-url", opts.RootShardURL, "--secure-port", strconv.Itoa(opts.Port))
	p.cmd.Stdout, p.cmd.Stderr = log, log
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the front-proxy: %w", err)
	}
	p.exited = make(chan error, 1)
	go func() { p.exited <- p.cmd.Wait() }()
	return p, p.waitRouting(ctx)
}

// waitRouting waits until the root workspace answers through the proxy:
// its own /readyz says nothing of its index of the shards' workspaces.
func (p *FrontProxy) waitRouting(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	var last error
	err := wait.PollUntilContextCancel(ctx, 250*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		select {
		case err := <-p.exited:
			return false, fmt.Errorf("the front-proxy exited (%v); see %s", err, p.LogPath)
		default:
		}
		cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
			&clientcmd.ClientConfigLoadingRules{ExplicitPath: filepath.Join(p.opts.RootDir, "admin.kubeconfig")},
			&clientcmd.ConfigOverrides{CurrentContext: "base"}).ClientConfig()
		if err != nil {
			last = err
			return false, nil
		}
		root := rest.CopyConfig(cfg)
		root.Host += "/clusters/root"
		dc, err := discovery.NewDiscoveryClientForConfig(root)
		if err != nil {
			return false, err
		}
		if _, last = dc.ServerVersion(); last != nil {
			return false, nil
		}
		p.Admin = cfg
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("the front-proxy routes nothing to the root shard: %w (last: %v); see %s", err, last, p.LogPath)
	}
	return nil
}

// Hub is the hub seen through the front-proxy, as its clients see it.
func (p *FrontProxy) Hub() *Hub {
	return &Hub{opts: HubOptions{RootDir: p.opts.RootDir}, Admin: p.Admin, port: p.opts.Port}
}

// KubeconfigPath is the hub admin's kubeconfig at the front-proxy.
func (p *FrontProxy) KubeconfigPath() string {
	return filepath.Join(p.opts.RootDir, "admin.kubeconfig")
}

// Stop ends the front-proxy.
func (p *FrontProxy) Stop() {
	if p.cmd == nil || p.cmd.Process == nil {
		return
	}
	// Stopped on purpose: how it exited says nothing.
	pid := p.cmd.Process.Pid
	_ = syscall.Kill(-pid, syscall.SIGTERM)
	kill := time.AfterFunc(10*time.Second, func() { _ = syscall.Kill(-pid, syscall.SIGKILL) })
	_ = exitOf(p.exited)
	kill.Stop()
	p.cmd = nil
}
