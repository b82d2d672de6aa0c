package pki

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
)

// The authorities of a hub of several shards.
const (
	// ServingCA signs the serving certificates of the shards and the
	// front-proxy: shards reach each other, and clients every one of them.
	ServingCA = "serving-ca"
	// ClientCA signs the client certificates the shards and the
	// front-proxy accept: the hub admin's, and those the shards use with
	// each other.
	ClientCA = "client-ca"
	// RequestHeaderCA signs the front-proxy's certificate, with which it
	// passes on to a shard who made a request.
	RequestHeaderCA = "requestheader-ca"
)

// ServiceAccountKey is the file name of the key every shard signs and
// checks service account tokens with: a token issued in a workspace of one
// shard is then good at the front-proxy and at every shard.
const ServiceAccountKey = "service-account.key"

// Shared is a directory holding a hub's authorities and service account
// key, which every shard and the front-proxy read. On one machine they
// share it; on several, each gets a copy. It holds private keys: only the
// hub's processes may read it.
type Shared string

// File is the path of a file of the directory.
func (s Shared) File(name string) string { return filepath.Join(string(s), name) }

// CertFile and KeyFile are where an authority's certificate and key are.
func (s Shared) CertFile(authority string) string { return s.File(authority + ".crt") }
func (s Shared) KeyFile(authority string) string  { return s.File(authority + ".key") }

// Ensure creates what the directory lacks: the three authorities and the
// service account key. Processes starting together create them once: the
// first to hold the directory's lock writes, the others then read.
func (s Shared) Ensure(now time.Time) error {
	if err := os.MkdirAll(string(s), 0o700); err != nil {
		return err
	}
	unlock, err := lock(s.File(".lock"))
	if err != nil {
		return fmt.Errorf("locking %s: %w", s, err)
	}
	defer unlock()
	for _, name := range []string{ServingCA, ClientCA, RequestHeaderCA} {
		if err := s.ensureAuthority(name, now); err != nil {
			return fmt.Errorf("the hub's authority %s in %s: %w", name, s, err)
		}
	}
	if _, err := os.Stat(s.File(ServiceAccountKey)); !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	key, err := keyutil.MakeEllipticPrivateKeyPEM()
	if err != nil {
		return err
	}
	return writeNew(s.File(ServiceAccountKey), key)
}

func (s Shared) ensureAuthority(name string, now time.Time) error {
	certFile, keyFile := s.CertFile(name), s.KeyFile(name)
	if ok, err := certutil.CanReadCertAndKey(certFile, keyFile); err != nil || ok {
		return err
	}
	a, err := NewAuthority(fmt.Sprintf("fleetplane-%s@%d", name, now.Unix()), now, authorityLifetime)
	if err != nil {
		return err
	}
	key, err := keyutil.MarshalPrivateKeyToPEM(a.Key)
	if err != nil {
		return err
	}
	if err := writeNew(keyFile, key); err != nil {
		return err
	}
	return writeNew(certFile, a.CertPEM())
}

// Authority reads one of the directory's authorities.
func (s Shared) Authority(name string) (*Authority, error) {
	a, err := loadAuthority(s.CertFile(name), s.KeyFile(name))
	if err != nil {
		return nil, fmt.Errorf("the hub's authority %s (in %s; every shard and the front-proxy need the same one): %w", name, s, err)
	}
	return a, nil
}

// lock takes an exclusive lock on file, released by the returned func.
func lock(file string) (func(), error) {
	f, err := os.OpenFile(file, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
