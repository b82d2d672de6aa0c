package server

import (
	"fmt"
	"net/url"
	"path/filepath"
	"time"

	kcpoptions "github.com/kcp-dev/kcp/cmd/kcp/options"
	kcpbootstrap "github.com/kcp-dev/kcp/pkg/authorization/bootstrap"
	"k8s.io/apiserver/pkg/authentication/user"

	"github.com/fleetplane/fleetplane/workspaces/pki"
)

// RootShard is the name of the shard that holds the root workspace, and
// with it root:fleet and root:teams.
const RootShard = "root"

// FrontProxyUser is the name in the front-proxy's certificate, with which
// it passes on to a shard who made a request: a shard takes that from no
// other certificate.
const FrontProxyUser = "fleet-front-proxy"

// ShardOptions make a hub one shard of a hub of several, behind kcp's
// front-proxy (docs/hub.md). Without PKI the hub is a single shard, as
// before.
type ShardOptions struct {
	// Name is kcp's name of the shard; RootShard holds the root workspace.
	Name string
	// PKI is the authorities and service account key every shard and the
	// front-proxy share.
	PKI pki.Shared
	// RootShardURL is the root shard's URL; other shards read kcp's shared
	// objects there, and from its cache server.
	RootShardURL string
	// BaseURL is how the other shards and the front-proxy reach this one
	// (default https://<external hostname>:<port>).
	BaseURL string
	// ExternalURL is the front-proxy's URL, through which clients reach
	// every shard.
	ExternalURL string
}

// Sharded says whether the hub is one shard of several.
func (s ShardOptions) Sharded() bool { return s.PKI != "" }

// Root says whether the shard holds the root workspace.
func (s ShardOptions) Root() bool { return s.Name == "" || s.Name == RootShard }

// Validate says what is missing or wrong, and how to set it.
func (s ShardOptions) Validate() error {
	if !s.Sharded() {
		if !s.Root() {
			return fmt.Errorf("--shard-name %s needs --shared-pki-dir: a shard other than root is part of a hub of several, whose shards share their authorities", s.Name)
		}
		return nil
	}
	if !s.Root() && s.RootShardURL == "" {
		return fmt.Errorf("--shard-name %s needs --root-shard-url: the URL of the shard named root, where this shard reads what every shard shares", s.Name)
	}
	for flag, u := range map[string]string{"--root-shard-url": s.RootShardURL, "--shard-base-url": s.BaseURL, "--external-url": s.ExternalURL} {
		if u == "" {
			continue
		}
		if parsed, err := url.Parse(u); err != nil || parsed.Scheme != "https" || parsed.Host == "" {
			return fmt.Errorf("%s %q is not an https URL such as https://shard-1.example.com:6443", flag, u)
		}
	}
	return nil
}

// servingNames are the names clients reach the shard by, for its serving
// certificate.
func (s ShardOptions) servingNames() []string {
	var names []string
	for _, u := range []string{s.BaseURL, s.ExternalURL} {
		if parsed, err := url.Parse(u); err == nil && parsed.Host != "" {
			names = append(names, parsed.Host)
		}
	}
	return names
}

// applyShard configures kcp as one shard of several: it trusts the shared
// client authority, the front-proxy's certificate for who made a request
// it passes on, and service account tokens any shard signed; it writes the
// kubeconfigs with which it reaches the root shard, the cache server, and
// the other shards.
func applyShard(o *kcpoptions.Options, rootDir string, s ShardOptions, now time.Time) error {
	extra := &o.Server.Extra
	extra.ShardName = s.Name
	if extra.ShardName == "" {
		extra.ShardName = RootShard
	}
	extra.ShardBaseURL = s.BaseURL
	extra.ShardExternalURL = s.ExternalURL
	if !s.Sharded() {
		return nil
	}
	if err := s.PKI.Ensure(now); err != nil {
		return err
	}
	auth := o.Server.GenericControlPlane.Authentication
	auth.ClientCert.ClientCA = s.PKI.CertFile(pki.ClientCA)
	auth.RequestHeader.ClientCAFile = s.PKI.CertFile(pki.RequestHeaderCA)
	auth.RequestHeader.AllowedNames = []string{FrontProxyUser}
	auth.RequestHeader.UsernameHeaders = []string{"X-Remote-User"}
	auth.RequestHeader.GroupHeaders = []string{"X-Remote-Group"}
	auth.RequestHeader.ExtraHeaderPrefixes = []string{"X-Remote-Extra-"}
	o.Server.Controllers.SAController.ServiceAccountKeyFile = s.PKI.File(pki.ServiceAccountKey)

	self := s.BaseURL
	if self == "" {
		self = s.RootShardURL
	}
	kubeconfigs := []shardKubeconfig{
		// kcp replaces the server with each shard's base URL.
		{"logical-cluster-admin.kubeconfig", pki.Identity{User: "fleet-logical-cluster-admin", Groups: []string{kcpbootstrap.SystemLogicalClusterAdmin}},
			[]pki.Context{{Name: "base", Server: self}}, &extra.LogicalClusterAdminKubeconfig},
		{"external-logical-cluster-admin.kubeconfig", pki.Identity{User: "fleet-external-logical-cluster-admin", Groups: []string{kcpbootstrap.SystemExternalLogicalClusterAdmin}},
			[]pki.Context{{Name: "base", Server: externalOr(s.ExternalURL, self)}}, &extra.ExternalLogicalClusterAdminKubeconfig},
	}
	if !s.Root() {
		shard := pki.Identity{User: "system:fleet-shard:" + s.Name, Groups: []string{user.SystemPrivilegedGroup}}
		kubeconfigs = append(kubeconfigs,
			shardKubeconfig{rootShardKubeconfig, shard, []pki.Context{{Name: "shard-base", Server: s.RootShardURL}}, &extra.RootShardKubeconfigFile},
			shardKubeconfig{"cache.kubeconfig", shard, []pki.Context{{Name: "cache", Server: s.RootShardURL}}, &o.Server.Cache.Client.KubeconfigFile})
	}
	if s.ExternalURL != "" {
		kubeconfigs = append(kubeconfigs, shardKubeconfig{frontProxyKubeconfig,
			pki.Identity{User: "system:fleet-shard:" + extra.ShardName, Groups: []string{kcpbootstrap.SystemKcpAdminGroup}},
			[]pki.Context{{Name: "front-proxy", Server: s.ExternalURL}}, nil})
	}
	for _, k := range kubeconfigs {
		file := filepath.Join(rootDir, k.file)
		if err := s.PKI.WriteKubeconfig(file, k.id, now, k.contexts...); err != nil {
			return fmt.Errorf("writing %s: %w", file, err)
		}
		if k.set != nil {
			*k.set = file
		}
	}
	return nil
}

// rootShardKubeconfig is the file in a shard's root directory with which it
// reaches the root shard.
const rootShardKubeconfig = "root-shard.kubeconfig"

// frontProxyKubeconfig is the file in a shard's root directory with which
// its controllers reach every shard, as the hub admin.
const frontProxyKubeconfig = "front-proxy.kubeconfig"

// FrontProxyKubeconfig is the kubeconfig with which a shard's controllers
// reach workspaces on every shard through the front-proxy (written at
// every start of a shard with an external URL), or "" where there is none.
func (s ShardOptions) FrontProxyKubeconfig(rootDir string) string {
	if !s.Sharded() || s.ExternalURL == "" {
		return ""
	}
	return filepath.Join(rootDir, frontProxyKubeconfig)
}

// RootShardKubeconfig is the kubeconfig with which a shard other than root
// reaches the root shard as system:masters; the shard writes it at every
// start.
func RootShardKubeconfig(rootDir string) string {
	return filepath.Join(rootDir, rootShardKubeconfig)
}

// shardKubeconfig is a kubeconfig a shard writes, and the kcp option that
// names it, if any.
type shardKubeconfig struct {
	file     string
	id       pki.Identity
	contexts []pki.Context
	set      *string
}

func externalOr(external, self string) string {
	if external != "" {
		return external
	}
	return self
}
