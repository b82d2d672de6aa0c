// Package pki issues the certificates of a hub: the single process's own
// self-signed serving certificate, and, for a hub of several shards, the
// authorities every shard, the front-proxy and the syncers trust, and the
// certificates each of them presents.
package pki

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"time"

	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
)

// LeafLifetime is how long a serving or client certificate is valid: a
// role issues its own again at every start, so a year is plenty.
const LeafLifetime = 365 * 24 * time.Hour

// authorityLifetime is how long a shared authority is valid: every shard
// and client trusts it, so it outlives any one certificate.
const authorityLifetime = 10 * 365 * 24 * time.Hour

// clockSkew is how far before now certificates become valid, for peers
// whose clocks are a little behind.
const clockSkew = time.Hour

// Authority signs certificates with a P-256 key: a P-256 signature costs a
// few percent of an RSA-2048 one, and a hub signs in every TLS handshake.
type Authority struct {
	Cert *x509.Certificate
	Key  *ecdsa.PrivateKey
}

// NewAuthority returns a new self-signed authority.
func NewAuthority(commonName string, now time.Time, lifetime time.Duration) (*Authority, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	notBefore := now.Add(-clockSkew)
	template := &x509.Certificate{
		Subject:               pkix.Name{CommonName: commonName},
		NotBefore:             notBefore,
		NotAfter:              notBefore.Add(lifetime),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := sign(template, template, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &Authority{Cert: cert, Key: key}, nil
}

// Hosts are the names a serving certificate is valid for.
type Hosts struct {
	IPs []net.IP
	DNS []string
}

// Add adds a host name or IP address once; a host:port counts as its host.
func (h *Hosts) Add(host string) {
	if name, _, err := net.SplitHostPort(host); err == nil {
		host = name
	}
	if ip := net.ParseIP(host); ip != nil {
		for _, have := range h.IPs {
			if have.Equal(ip) {
				return
			}
		}
		h.IPs = append(h.IPs, ip)
		return
	}
	for _, have := range h.DNS {
		if have == host {
			return
		}
	}
	if host != "" {
		h.DNS = append(h.DNS, host)
	}
}

// Serving issues a serving certificate for hosts. certPEM holds it followed
// by the authority, as TLS servers send the chain.
func (a *Authority) Serving(commonName string, hosts Hosts, now time.Time) (certPEM, keyPEM []byte, err error) {
	return a.issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: commonName},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: hosts.IPs,
		DNSNames:    hosts.DNS,
	}, now)
}

// Client issues a client certificate for user in groups, as Kubernetes API
// servers read them: the common name is the user, the organizations its
// groups.
func (a *Authority) Client(user string, groups []string, now time.Time) (certPEM, keyPEM []byte, err error) {
	return a.issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: user, Organization: groups},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, now)
}

func (a *Authority) issue(template *x509.Certificate, now time.Time) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	template.NotBefore = now.Add(-clockSkew)
	template.NotAfter = template.NotBefore.Add(LeafLifetime)
	template.KeyUsage = x509.KeyUsageDigitalSignature
	template.BasicConstraintsValid = true
	der, err := sign(template, a.Cert, &key.PublicKey, a.Key)
	if err != nil {
		return nil, nil, err
	}
	keyPEM, err = keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		return nil, nil, err
	}
	var chain bytes.Buffer
	for _, c := range [][]byte{der, a.Cert.Raw} {
		if err := pem.Encode(&chain, &pem.Block{Type: certutil.CertificateBlockType, Bytes: c}); err != nil {
			return nil, nil, err
		}
	}
	return chain.Bytes(), keyPEM, nil
}

// CertPEM is the authority's certificate, for clients to trust.
func (a *Authority) CertPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: certutil.CertificateBlockType, Bytes: a.Cert.Raw})
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

// loadAuthority reads an authority's certificate and key.
func loadAuthority(certFile, keyFile string) (*Authority, error) {
	certs, err := certutil.CertsFromFile(certFile)
	if err != nil {
		return nil, err
	}
	key, err := keyutil.PrivateKeyFromFile(keyFile)
	if err != nil {
		return nil, err
	}
	ec, ok := key.(*ecdsa.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("%s holds a %T key; the hub's authorities sign with ECDSA keys", keyFile, key)
	}
	return &Authority{Cert: certs[0], Key: ec}, nil
}

// writeNew writes data to a file that must not exist yet, readable by its
// owner alone.
func writeNew(file string, data []byte) error {
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	return errors.Join(err, f.Close())
}
