// Package credential keeps the syncer's hub credential fresh. The token
// `kubectl fleet join` issues is a short-lived, bound service-account token;
// the syncer renews it for its own service account before it expires and
// keeps the newest one in a Secret on the member cluster, so that a restarted
// syncer starts with a valid token. Deleting the service account on the hub
// (as `kubectl fleet unjoin` does) revokes every token at once.
package credential

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
)

// SecretName is the Secret, in the member's fleet-system namespace, that
// holds the syncer's newest hub token.
const SecretName = "fleet-syncer-hub-token"

// renewAt is the share of a token's life after which it is renewed.
const renewAt = 0.7

// Token is the syncer's current hub token.
type Token struct {
	mu     sync.RWMutex
	claims claims
	value  string
}

// claims are what the syncer needs to know of a service-account token.
type claims struct {
	namespace, name string
	// uid is the service account's: a token of an earlier account of the
	// same name (deleted when the member left) is never taken.
	uid            string
	issued, expiry time.Time
}

// Parse reads a bound service-account token. It returns an error for any
// other credential (which is then used as it is, without renewal).
func Parse(token string) (*Token, error) {
	c, err := parseClaims(token)
	if err != nil {
		return nil, err
	}
	return &Token{claims: c, value: token}, nil
}

func parseClaims(token string) (claims, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return claims{}, fmt.Errorf("not a JSON web token")
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return claims{}, fmt.Errorf("decoding the token's claims: %w", err)
	}
	var c struct {
		Subject    string `json:"sub"`
		IssuedAt   int64  `json:"iat"`
		Expiry     int64  `json:"exp"`
		Kubernetes struct {
			ServiceAccount struct {
				UID string `json:"uid"`
			} `json:"serviceaccount"`
		} `json:"kubernetes.io"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return claims{}, fmt.Errorf("decoding the token's claims: %w", err)
	}
	ns, name, err := serviceaccount.SplitUsername(c.Subject)
	if err != nil {
		return claims{}, fmt.Errorf("the token is not a service account's (subject %q)", c.Subject)
	}
	if c.Expiry == 0 {
		return claims{}, fmt.Errorf("the token of %s/%s does not expire", ns, name)
	}
	return claims{namespace: ns, name: name, uid: c.Kubernetes.ServiceAccount.UID, issued: time.Unix(c.IssuedAt, 0), expiry: time.Unix(c.Expiry, 0)}, nil
}

// Value returns the current token.
func (t *Token) Value() string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.value
}

// Expiry returns when the current token expires.
func (t *Token) Expiry() time.Time {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.claims.expiry
}

// set takes a newer token of the same service account.
func (t *Token) set(token string) error {
	c, err := parseClaims(token)
	if err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if c.namespace != t.claims.namespace || c.name != t.claims.name || c.uid != t.claims.uid {
		return fmt.Errorf("the token is of %s/%s (uid %s), not of %s/%s (uid %s)", c.namespace, c.name, c.uid, t.claims.namespace, t.claims.name, t.claims.uid)
	}
	if c.expiry.After(t.claims.expiry) {
		t.claims, t.value = c, token
	}
	return nil
}

// Authenticate makes every client built from cfg send the current token.
func (t *Token) Authenticate(cfg *rest.Config) {
	cfg.BearerToken, cfg.BearerTokenFile = "", ""
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return &bearer{token: t, next: rt} })
}

type bearer struct {
	token *Token
	next  http.RoundTripper
}

func (b *bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+b.token.Value())
	return b.next.RoundTrip(req)
}

// Store keeps the newest token on the member cluster.
type Store struct {
	Member client.Client
	// Name is the Secret in fleet-system that holds it; empty is
	// SecretName, the token of the hub workspace the syncer joined.
	Name string
}

func (s Store) secretName() string {
	if s.Name != "" {
		return s.Name
	}
	return SecretName
}

// Load takes the stored token if it is a newer one of the same account.
func (s Store) Load(ctx context.Context, t *Token) error {
	secret := &corev1.Secret{}
	err := s.Member.Get(ctx, client.ObjectKey{Namespace: clusterv1beta1.FleetSystemNamespace, Name: s.secretName()}, secret)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading the stored hub token: %w", err)
	}
	if stored := string(secret.Data[corev1.ServiceAccountTokenKey]); stored != "" {
		if err := t.set(stored); err != nil {
			log.FromContext(ctx).Info("ignoring the stored hub token", "reason", err.Error())
		}
	}
	return nil
}

// Save stores the token.
func (s Store) Save(ctx context.Context, token string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: clusterv1beta1.FleetSystemNamespace}}
	if err := s.Member.Create(ctx, ns); client.IgnoreAlreadyExists(err) != nil {
		return err
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: s.secretName()}}
	_, err := controllerutil.CreateOrUpdate(ctx, s.Member, secret, func() error {
		secret.Data = map[string][]byte{corev1.ServiceAccountTokenKey: []byte(token)}
		return nil
	})
	return err
}

// Renew renews the token before it expires, for as long as ctx lasts: the
// hub issues a new token of the same lifetime for the syncer's own service
// account, which the syncer then uses and stores.
func (t *Token) Renew(ctx context.Context, hub kubernetes.Interface, store Store) {
	logger := log.FromContext(ctx).WithName("hub-credential")
	for {
		t.mu.RLock()
		c := t.claims
		t.mu.RUnlock()
		lifetime := c.expiry.Sub(c.issued)
		at := c.issued.Add(time.Duration(float64(lifetime) * renewAt))
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Until(at)):
		}
		req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(lifetime.Seconds()))}}
		backoff := wait.Backoff{Duration: time.Second, Factor: 2, Steps: 1 << 30, Cap: time.Minute}
		err := wait.ExponentialBackoffWithContext(ctx, backoff, func(ctx context.Context) (bool, error) {
			got, err := hub.CoreV1().ServiceAccounts(c.namespace).CreateToken(ctx, c.name, req, metav1.CreateOptions{})
			if err != nil {
				logger.Error(err, "renewing the hub token; retrying", "expires", c.expiry)
				return false, nil
			}
			if err := t.set(got.Status.Token); err != nil {
				return false, err
			}
			if err := store.Save(ctx, got.Status.Token); err != nil {
				logger.Error(err, "storing the renewed hub token on the member cluster; a restarted syncer uses the older one")
			}
			return true, nil
		})
		if err != nil {
			if ctx.Err() == nil {
				logger.Error(err, "hub token renewal stopped")
			}
			return
		}
		logger.V(2).Info("renewed the hub token", "expires", t.Expiry())
	}
}
