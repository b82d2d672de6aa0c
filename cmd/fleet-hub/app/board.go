package app

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"path/filepath"

	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"github.com/fleetplane/fleetplane/board"
	"github.com/fleetplane/fleetplane/internal/huburl"
	"github.com/fleetplane/fleetplane/workspaces/server"
)

// boardOptions serve the fleet board from the hub (docs/board.md).
type boardOptions struct {
	enabled     bool
	bindAddress string
}

func (o *boardOptions) addFlags(f *pflag.FlagSet) {
	f.BoolVar(&o.enabled, "board", false, "serve the fleet board over HTTPS with the hub's serving certificate; people sign in with a token of their workspace, which stays on the hub (docs/board.md)")
	f.StringVar(&o.bindAddress, "board-bind-address", ":8443", "address the fleet board listens on, with --board")
}

// startBoard serves the board until ctx is done, with --board. It reaches the hub at the
// URL its clients use (the front-proxy's, in a hub of several shards) and
// holds no credential of its own: each session acts with the token its
// person signed in with.
func startBoard(ctx context.Context, opts server.Options, o boardOptions) error {
	if !o.enabled {
		return nil
	}
	admin, err := clientcmd.BuildConfigFromFlags("", server.AdminKubeconfigPath(opts.RootDir))
	if err != nil {
		return fmt.Errorf("the fleet board reads the hub's address and CA from its admin kubeconfig: %w", err)
	}
	base := rest.AnonymousClientConfig(admin)
	base.Host = huburl.Base(base.Host)
	if opts.Shard.ExternalURL != "" {
		base.Host = opts.Shard.ExternalURL
	}
	cert, err := tls.LoadX509KeyPair(filepath.Join(opts.RootDir, "apiserver.crt"), filepath.Join(opts.RootDir, "apiserver.key"))
	if err != nil {
		return fmt.Errorf("the fleet board serves with the hub's serving certificate: %w", err)
	}
	ln, err := net.Listen("tcp", o.bindAddress)
	if err != nil {
		return fmt.Errorf("the fleet board cannot listen on %s (--board-bind-address): %w", o.bindAddress, err)
	}
	klog.FromContext(ctx).Info("Serving the fleet board", "address", "https://"+ln.Addr().String())
	go func() {
		if err := board.New(base).Serve(ctx, tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})); err != nil {
			klog.FromContext(ctx).Error(err, "The fleet board stopped")
		}
	}()
	return nil
}
