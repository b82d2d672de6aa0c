package server

import (
	"crypto/ecdsa"
	"crypto/tls"
	"crypto/x509"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	certutil "k8s.io/client-go/util/cert"
	controlplaneoptions "k8s.io/kubernetes/pkg/controlplane/apiserver/options"

	"github.com/fleetplane/fleetplane/workspaces/pki"
)

func servingOptions(t *testing.T, bind string) *controlplaneoptions.Options {
	t.Helper()
	cp := controlplaneoptions.NewOptions()
	cp.SecureServing.BindAddress = net.ParseIP(bind)
	cp.SecureServing.ServerCert.CertDirectory = t.TempDir()
	cp.SecureServing.ServerCert.PairName = "apiserver"
	cp.GenericServerRunOptions.AdvertiseAddress = net.ParseIP("10.1.2.3")
	return cp
}

func TestEnsureServingCertWritesAP256ChainForTheHubsNames(t *testing.T) {
	cp := servingOptions(t, "127.0.0.1")
	now := time.Now()
	if err := ensureServingCert(cp, []string{"hub.example.com:443"}, nil, now); err != nil {
		t.Fatal(err)
	}
	dir := cp.SecureServing.ServerCert.CertDirectory
	pair, err := tls.LoadX509KeyPair(filepath.Join(dir, "apiserver.crt"), filepath.Join(dir, "apiserver.key"))
	if err != nil {
		t.Fatalf("the written pair does not load as a serving certificate: %v", err)
	}
	if _, ok := pair.PrivateKey.(*ecdsa.PrivateKey); !ok {
		t.Fatalf("serving key is %T, want ECDSA", pair.PrivateKey)
	}
	chain, err := certutil.CertsFromFile(filepath.Join(dir, "apiserver.crt"))
	if err != nil || len(chain) != 2 {
		t.Fatalf("want the serving certificate followed by its CA, got %d certificates (%v)", len(chain), err)
	}
	if n := len(chain[0].IPAddresses); n != 3 {
		t.Errorf("want the advertise address and loopback once each, got %d addresses: %v", n, chain[0].IPAddresses)
	}
	roots := x509.NewCertPool()
	roots.AddCert(chain[1])
	for _, name := range []string{"hub.example.com", "localhost", "127.0.0.1", "::1", "10.1.2.3"} {
		if _, err := chain[0].Verify(x509.VerifyOptions{DNSName: name, Roots: roots, CurrentTime: now}); err != nil {
			t.Errorf("a client trusting the written CA cannot reach the hub as %s: %v", name, err)
		}
	}
	if _, err := chain[0].Verify(x509.VerifyOptions{DNSName: "other.example.com", Roots: roots, CurrentTime: now}); err == nil {
		t.Error("the certificate is valid for a name the hub does not serve")
	}
}

func TestEnsureServingCertKeepsAnExistingPair(t *testing.T) {
	cp := servingOptions(t, "0.0.0.0")
	dir := cp.SecureServing.ServerCert.CertDirectory
	for _, f := range []string{"apiserver.crt", "apiserver.key"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("kept"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := ensureServingCert(cp, nil, nil, time.Now()); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"apiserver.crt", "apiserver.key"} {
		if b, _ := os.ReadFile(filepath.Join(dir, f)); string(b) != "kept" {
			t.Errorf("%s was replaced: a restarted hub must keep the certificate its members trust", f)
		}
	}
}

func TestEnsureServingCertOfAShardIsIssuedByTheHubsAuthorityAtEveryStart(t *testing.T) {
	cp := servingOptions(t, "127.0.0.1")
	dir := cp.SecureServing.ServerCert.CertDirectory
	for _, f := range []string{"apiserver.crt", "apiserver.key"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("an earlier start's"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now()
	ca, err := pki.NewAuthority("hub serving CA", now, 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if err := ensureServingCert(cp, []string{"shard-1.example.com"}, ca, now); err != nil {
		t.Fatal(err)
	}
	if _, err := tls.LoadX509KeyPair(filepath.Join(dir, "apiserver.crt"), filepath.Join(dir, "apiserver.key")); err != nil {
		t.Fatalf("the shard's pair does not load: %v", err)
	}
	chain, err := certutil.CertsFromFile(filepath.Join(dir, "apiserver.crt"))
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)
	if _, err := chain[0].Verify(x509.VerifyOptions{DNSName: "shard-1.example.com", Roots: roots, CurrentTime: now}); err != nil {
		t.Errorf("other shards trusting the hub's authority cannot reach this one by its name: %v", err)
	}
}
