package pki

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
)

func TestEnsureCreatesTheAuthoritiesOnceForProcessesStartingTogether(t *testing.T) {
	dir := Shared(t.TempDir() + "/pki")
	now := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = dir.Ensure(now)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	first, err := os.ReadFile(dir.CertFile(ClientCA))
	if err != nil {
		t.Fatal(err)
	}
	if err := dir.Ensure(now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	again, _ := os.ReadFile(dir.CertFile(ClientCA))
	if string(first) != string(again) {
		t.Error("a later start replaced the client authority every shard trusts")
	}
	for _, name := range []string{ServingCA, ClientCA, RequestHeaderCA} {
		if _, err := dir.Authority(name); err != nil {
			t.Error(err)
		}
		info, err := os.Stat(dir.KeyFile(name))
		if err != nil || info.Mode().Perm() != 0o600 {
			t.Errorf("the key of %s must be readable by its owner alone: %v %v", name, info.Mode(), err)
		}
	}
	if keys, err := keyutil.PublicKeysFromFile(dir.File(ServiceAccountKey)); err != nil || len(keys) != 1 {
		t.Errorf("the service account key file gives no public key to check tokens with: %v", err)
	}
}

func TestClientCertificatesNameTheUserAndGroupsAndChainToTheAuthority(t *testing.T) {
	now := time.Now()
	ca, err := NewAuthority("client CA", now, 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM, err := ca.Client("kcp-admin", []string{"system:kcp:admin"}, now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tls.X509KeyPair(certPEM, keyPEM); err != nil {
		t.Fatal(err)
	}
	certs, err := certutil.ParseCertsPEM(certPEM)
	if err != nil {
		t.Fatal(err)
	}
	leaf := certs[0]
	if leaf.Subject.CommonName != "kcp-admin" || !slices.Equal(leaf.Subject.Organization, []string{"system:kcp:admin"}) {
		t.Errorf("subject %v, want user kcp-admin in group system:kcp:admin", leaf.Subject)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, CurrentTime: now}); err != nil {
		t.Errorf("a shard trusting the client authority refuses the certificate: %v", err)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, CurrentTime: now}); err == nil {
		t.Error("a client certificate serves as a server's")
	}
}

func TestHostsAddsEachNameOnce(t *testing.T) {
	var h Hosts
	for _, name := range []string{"127.0.0.1", "127.0.0.1:6443", "hub.example.com", "hub.example.com:443", "::1", ""} {
		h.Add(name)
	}
	if len(h.IPs) != 2 || !slices.Equal(h.DNS, []string{"hub.example.com"}) {
		t.Errorf("got IPs %v and names %v", h.IPs, h.DNS)
	}
}
