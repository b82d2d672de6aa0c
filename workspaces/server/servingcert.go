package server

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"path/filepath"
	"slices"
	"time"

	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
	controlplaneoptions "k8s.io/kubernetes/pkg/controlplane/apiserver/options"
)

// servingCertLifetime matches what kcp's self-signed fallback gives.
const servingCertLifetime = 365 * 24 * time.Hour

// ensureServingCert writes a self-signed CA and a serving certificate signed
// by it to the files kcp loads its serving certificate from
// (<root-dir>/apiserver.crt and .key), unless they can be read already.
// kcp's own fallback makes RSA-2048 keys, and the hub signs with its key in
// every TLS handshake: ~1 ms of CPU each, 2.3% of a restart's CPU with 1,000
// members reconnecting. A P-256 signature costs a few percent of that. A
// hub that already has a certificate keeps it (its members trust that CA).
//
// The names are kcp's (the advertise address, the bind address, or
// localhost when binding every interface) plus loopback and the external
// host name, which the hub writes into kubeconfigs.
func ensureServingCert(cp *controlplaneoptions.Options, externalHostname string, now time.Time) error {
	serving := cp.SecureServing.SecureServingOptions
	pair := serving.ServerCert
	if pair.CertKey.CertFile != "" || pair.CertKey.KeyFile != "" || pair.CertDirectory == "" {
		return nil
	}
	certFile := filepath.Join(pair.CertDirectory, pair.PairName+".crt")
	keyFile := filepath.Join(pair.CertDirectory, pair.PairName+".key")
	if exists, err := certutil.CanReadCertAndKey(certFile, keyFile); err != nil || exists {
		return err
	}
	// Sets the address kcp's Complete would set: the certificate names it.
	if err := cp.GenericServerRunOptions.DefaultAdvertiseAddress(serving); err != nil {
		return fmt.Errorf("the hub's serving certificate: %w", err)
	}
	advertise := cp.GenericServerRunOptions.AdvertiseAddress
	var ips []net.IP
	addIP := func(ip net.IP) {
		if !slices.ContainsFunc(ips, ip.Equal) {
			ips = append(ips, ip)
		}
	}
	for _, ip := range []net.IP{advertise, net.IPv4(127, 0, 0, 1), net.IPv6loopback} {
		addIP(ip)
	}
	if !serving.BindAddress.IsUnspecified() {
		addIP(serving.BindAddress)
	}
	dns := []string{"localhost"}
	external := externalHostname
	if host, _, err := net.SplitHostPort(external); err == nil {
		external = host // the API server takes host:port there too
	}
	if ip := net.ParseIP(external); ip != nil {
		addIP(ip)
	} else if external != "" {
		dns = append(dns, external)
	}
	certPEM, keyPEM, err := selfSignedServingCert(advertise.String(), ips, dns, now)
	if err != nil {
		return fmt.Errorf("generating the hub's serving certificate: %w", err)
	}
	if err := certutil.WriteCert(certFile, certPEM); err != nil {
		return err
	}
	return keyutil.WriteKey(keyFile, keyPEM)
}

// selfSignedServingCert returns a serving certificate for ips and dns
// followed by the CA that signed it (both P-256, PEM), and the serving key.
// The CA's key is not kept: nothing else is ever signed with it.
func selfSignedServingCert(host string, ips []net.IP, dns []string, now time.Time) (certPEM, keyPEM []byte, err error) {
	notBefore := now.Add(-time.Hour) // tolerate clocks a little behind
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	ca := &x509.Certificate{
		Subject:               pkix.Name{CommonName: fmt.Sprintf("fleet-hub-ca@%d", now.Unix())},
		NotBefore:             notBefore,
		NotAfter:              notBefore.Add(servingCertLifetime),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := sign(ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, nil, err
	}
	if ca, err = x509.ParseCertificate(caDER); err != nil {
		return nil, nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	leaf := &x509.Certificate{
		Subject:               pkix.Name{CommonName: fmt.Sprintf("%s@%d", host, now.Unix())},
		NotBefore:             notBefore,
		NotAfter:              notBefore.Add(servingCertLifetime),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IPAddresses:           ips,
		DNSNames:              dns,
	}
	leafDER, err := sign(leaf, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	var chain bytes.Buffer
	for _, der := range [][]byte{leafDER, caDER} {
		if err := pem.Encode(&chain, &pem.Block{Type: certutil.CertificateBlockType, Bytes: der}); err != nil {
			return nil, nil, err
		}
	}
	return chain.Bytes(), pem.EncodeToMemory(&pem.Block{Type: keyutil.ECPrivateKeyBlockType, Bytes: keyDER}), nil
}

// sign issues template with a random serial number.
func sign(template, parent *x509.Certificate, pub *ecdsa.PublicKey, signer *ecdsa.PrivateKey) ([]byte, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 63))
	if err != nil {
		return nil, err
	}
	template.SerialNumber = serial.Add(serial, big.NewInt(1))
	return x509.CreateCertificate(rand.Reader, template, parent, pub, signer)
}
