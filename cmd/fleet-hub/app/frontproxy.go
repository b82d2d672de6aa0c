package app

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	kcpbootstrap "github.com/kcp-dev/kcp/pkg/authorization/bootstrap"
	"github.com/kcp-dev/kcp/pkg/proxy"
	proxyoptions "github.com/kcp-dev/kcp/pkg/proxy/options"
	kcpproxy "github.com/kcp-dev/kcp/pkg/server/proxy"
	"github.com/spf13/cobra"
	"k8s.io/apiserver/pkg/authentication/user"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
	"sigs.k8s.io/yaml"

	"github.com/fleetplane/fleetplane/workspaces/pki"
	"github.com/fleetplane/fleetplane/workspaces/server"
)

// frontProxyOptions are the settings of `fleet-hub front-proxy`.
type frontProxyOptions struct {
	RootDir          string
	PKI              pki.Shared
	RootShardURL     string
	BindAddress      string
	SecurePort       int
	ExternalHostname string
}

func newFrontProxyCommand() *cobra.Command {
	opts := frontProxyOptions{RootDir: ".fleet-front-proxy", BindAddress: "127.0.0.1", SecurePort: 6443}
	cmd := &cobra.Command{
		Use:   "front-proxy",
		Short: "Run kcp's front-proxy: one address for every shard of a hub of several",
		Long: `Run kcp's front-proxy before the shards of a hub of several (docs/hub.md).
It routes each /clusters/<workspace> request to the shard that holds the
workspace. Client certificates of the hub's client authority are checked
here and passed on as who made the request; a bearer token (a service
account's) goes through to the shard, which checks it. The hub admin's
kubeconfig, for kubectl and kubectl ws, is written to <root-dir>/admin.kubeconfig.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			proxyOpts, err := opts.kcpOptions(time.Now())
			if err != nil {
				return err
			}
			config, err := proxy.NewConfig(ctx, proxyOpts)
			if err != nil {
				return err
			}
			completed, err := config.Complete()
			if err != nil {
				return err
			}
			s, err := proxy.NewServer(ctx, completed)
			if err != nil {
				return err
			}
			s.Handler = withoutClaimedIdentity(s.Handler)
			prepared, err := s.PrepareRun(ctx)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Fleetplane front-proxy at https://%s; export KUBECONFIG=%s\n",
				net.JoinHostPort(opts.host(), strconv.Itoa(opts.SecurePort)), filepath.Join(opts.RootDir, "admin.kubeconfig"))
			return prepared.Run(ctx)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.RootDir, "root-dir", opts.RootDir, "directory for the front-proxy's certificates, path mapping and kubeconfigs")
	f.StringVar((*string)(&opts.PKI), "shared-pki-dir", "", "directory of the authorities the hub's shards share (their --shared-pki-dir)")
	f.StringVar(&opts.RootShardURL, "root-shard-url", "", "URL of the root shard")
	f.StringVar(&opts.BindAddress, "bind-address", opts.BindAddress, "IP address the front-proxy listens on")
	f.IntVar(&opts.SecurePort, "secure-port", opts.SecurePort, "HTTPS port of the front-proxy")
	f.StringVar(&opts.ExternalHostname, "external-hostname", "", "host name clients use to reach the front-proxy (written into kubeconfigs); defaults to --bind-address")
	return cmd
}

func (o frontProxyOptions) host() string {
	if o.ExternalHostname != "" {
		return o.ExternalHostname
	}
	return o.BindAddress
}

// kcpOptions issues the front-proxy's certificates, writes its path mapping
// and kubeconfigs, and returns kcp's proxy options for them.
func (o frontProxyOptions) kcpOptions(now time.Time) (*proxyoptions.Options, error) {
	if o.PKI == "" || o.RootShardURL == "" {
		return nil, fmt.Errorf("the front-proxy needs --shared-pki-dir (the shards' authorities) and --root-shard-url")
	}
	if err := o.PKI.Ensure(now); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(o.RootDir, 0o700); err != nil {
		return nil, err
	}
	file := func(name string) string { return filepath.Join(o.RootDir, name) }
	var hosts pki.Hosts
	for _, h := range []string{o.host(), o.BindAddress, "127.0.0.1", "localhost"} {
		hosts.Add(h)
	}
	if err := o.issue(pki.ServingCA, file("apiserver"), func(a *pki.Authority) ([]byte, []byte, error) {
		return a.Serving(o.host(), hosts, now)
	}); err != nil {
		return nil, err
	}
	if err := o.issue(pki.RequestHeaderCA, file("requestheader"), func(a *pki.Authority) ([]byte, []byte, error) {
		return a.Client(server.FrontProxyUser, nil, now)
	}); err != nil {
		return nil, err
	}
	// The front-proxy watches every shard's workspaces to route requests.
	shardsID := pki.Identity{User: "system:fleet-front-proxy", Groups: []string{user.SystemPrivilegedGroup}}
	if err := o.PKI.WriteKubeconfig(file("root.kubeconfig"), shardsID, now, pki.Context{Name: "root", Server: o.RootShardURL}); err != nil {
		return nil, err
	}
	if err := o.PKI.WriteKubeconfig(file("shards.kubeconfig"), shardsID, now, pki.Context{Name: "shards", Server: o.RootShardURL}); err != nil {
		return nil, err
	}
	base := "https://" + net.JoinHostPort(o.host(), strconv.Itoa(o.SecurePort))
	admin := pki.Identity{User: "kcp-admin", Groups: []string{kcpbootstrap.SystemKcpAdminGroup}}
	if err := o.PKI.WriteKubeconfig(file("admin.kubeconfig"), admin, now,
		pki.Context{Name: "root", Server: base + "/clusters/root"}, pki.Context{Name: "base", Server: base}); err != nil {
		return nil, err
	}
	mapping := []kcpproxy.PathMapping{
		{Path: "/clusters/", Backend: o.RootShardURL},
		// Each shard serves the virtual workspaces of its own workspaces;
		// clients of the hub read them at the shards (their endpoint
		// slices name each shard's URL).
		{Path: "/services/", Backend: o.RootShardURL},
	}
	for i := range mapping {
		mapping[i].BackendServerCA = o.PKI.CertFile(pki.ServingCA)
		mapping[i].ProxyClientCert, mapping[i].ProxyClientKey = file("requestheader.crt"), file("requestheader.key")
	}
	data, err := yaml.Marshal(mapping)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(file("mapping.yaml"), data, 0o600); err != nil {
		return nil, err
	}

	p := proxyoptions.NewOptions()
	p.RootDirectory = o.RootDir
	p.MappingFile = file("mapping.yaml")
	p.RootKubeconfig = file("root.kubeconfig")
	p.ShardsKubeconfig = file("shards.kubeconfig")
	p.SecureServing.BindAddress = net.ParseIP(o.BindAddress)
	if p.SecureServing.BindAddress == nil {
		return nil, fmt.Errorf("--bind-address %q is not an IP address", o.BindAddress)
	}
	p.SecureServing.BindPort = o.SecurePort
	p.SecureServing.ServerCert.CertKey.CertFile, p.SecureServing.ServerCert.CertKey.KeyFile = file("apiserver.crt"), file("apiserver.key")
	p.Authentication.BuiltInOptions.ClientCert.ClientCA = o.PKI.CertFile(pki.ClientCA)
	if err := p.Complete(); err != nil {
		return nil, err
	}
	if errs := p.Validate(); len(errs) > 0 {
		return nil, errs[0]
	}
	return p, nil
}

// issue writes the certificate and key that authority issues to
// <prefix>.crt and <prefix>.key.
func (o frontProxyOptions) issue(authority, prefix string, issue func(*pki.Authority) ([]byte, []byte, error)) error {
	a, err := o.PKI.Authority(authority)
	if err != nil {
		return err
	}
	certPEM, keyPEM, err := issue(a)
	if err != nil {
		return err
	}
	if err := certutil.WriteCert(prefix+".crt", certPEM); err != nil {
		return err
	}
	return keyutil.WriteKey(prefix+".key", keyPEM)
}

// withoutClaimedIdentity drops the headers in which the front-proxy tells a
// shard who made a request, as a client sent them: the front-proxy sets them
// from the certificate it checked, and adds groups to any already there, so
// a client's own X-Remote-Group: system:masters would otherwise reach the
// shard over the front-proxy's trusted connection.
func withoutClaimedIdentity(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for name := range r.Header {
			if strings.HasPrefix(strings.ToLower(name), "x-remote-") {
				r.Header.Del(name)
			}
		}
		next.ServeHTTP(w, r)
	})
}
