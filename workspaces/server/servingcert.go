package server

import (
	"fmt"
	"net"
	"path/filepath"
	"time"

	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
	controlplaneoptions "k8s.io/kubernetes/pkg/controlplane/apiserver/options"

	"github.com/fleetplane/fleetplane/workspaces/pki"
)

// servingCertLifetime matches what kcp's self-signed fallback gives.
const servingCertLifetime = 365 * 24 * time.Hour

// ensureServingCert writes the serving certificate kcp loads
// (<root-dir>/apiserver.crt and .key). A shard of a hub of several shards
// gets one from the hub's serving authority at every start, for its names
// of that start. A single hub gets a self-signed CA and a certificate signed
// by it, unless it can read one already: a hub that has a certificate keeps
// it (its members trust that CA). kcp's own fallback makes RSA-2048 keys,
// and the hub signs with its key in every TLS handshake: ~1 ms of CPU each,
// 2.3% of a restart's CPU with 1,000 members reconnecting.
//
// The names are kcp's (the advertise address, the bind address, or
// localhost when binding every interface) plus loopback and the names
// clients use (the external host name, which the hub writes into
// kubeconfigs, and a shard's base URL).
func ensureServingCert(cp *controlplaneoptions.Options, names []string, authority *pki.Authority, now time.Time) error {
	serving := cp.SecureServing.SecureServingOptions
	pair := serving.ServerCert
	if pair.CertKey.CertFile != "" || pair.CertKey.KeyFile != "" || pair.CertDirectory == "" {
		return nil
	}
	certFile := filepath.Join(pair.CertDirectory, pair.PairName+".crt")
	keyFile := filepath.Join(pair.CertDirectory, pair.PairName+".key")
	if exists, err := certutil.CanReadCertAndKey(certFile, keyFile); err != nil || exists && authority == nil {
		return err
	}
	// Sets the address kcp's Complete would set: the certificate names it.
	if err := cp.GenericServerRunOptions.DefaultAdvertiseAddress(serving); err != nil {
		return fmt.Errorf("the hub's serving certificate: %w", err)
	}
	advertise := cp.GenericServerRunOptions.AdvertiseAddress
	hosts := pki.Hosts{IPs: []net.IP{advertise}}
	for _, name := range append([]string{"127.0.0.1", "::1"}, names...) {
		hosts.Add(name)
	}
	if !serving.BindAddress.IsUnspecified() {
		hosts.Add(serving.BindAddress.String())
	}
	hosts.Add("localhost")
	var certPEM, keyPEM []byte
	var err error
	if authority != nil {
		certPEM, keyPEM, err = authority.Serving(fmt.Sprintf("%s@%d", advertise, now.Unix()), hosts, now)
	} else {
		certPEM, keyPEM, err = selfSignedServingCert(advertise.String(), hosts, now)
	}
	if err != nil {
		return fmt.Errorf("generating the hub's serving certificate: %w", err)
	}
	if err := certutil.WriteCert(certFile, certPEM); err != nil {
		return err
	}
	return keyutil.WriteKey(keyFile, keyPEM)
}

// selfSignedServingCert returns a serving certificate for hosts followed by
// the CA that signed it (both P-256, PEM), and the serving key. The CA's key
// is not kept: nothing else is ever signed with it.
func selfSignedServingCert(host string, hosts pki.Hosts, now time.Time) (certPEM, keyPEM []byte, err error) {
	ca, err := pki.NewAuthority(fmt.Sprintf("fleet-hub-ca@%d", now.Unix()), now, servingCertLifetime)
	if err != nil {
		return nil, nil, err
	}
	return ca.Serving(fmt.Sprintf("%s@%d", host, now.Unix()), hosts, now)
}
