package board

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/kcp-dev/logicalcluster/v3"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

const (
	sessionCookie = "fleet-board-session"
	// sessionIdle ends a session nobody used for this long; its token is
	// forgotten with it.
	sessionIdle = 12 * time.Hour
)

// session is one signed-in browser: the credentials it acts with stay
// here, on the server; the browser holds only the session's random id.
type session struct {
	id   string
	user string
	// home is the workspace the session starts in.
	home logicalcluster.Path
	// config reaches the hub with the caller's own credentials; its Host
	// is the hub's base URL, without a workspace.
	config   *rest.Config
	lastSeen time.Time
}

// sessions holds the signed-in sessions and the one-time links that open
// one.
type sessions struct {
	mu       sync.Mutex
	byID     map[string]*session
	oneTime  map[string]*session
	now      func() time.Time
	onExpire func(id string)
}

func newSessions(onExpire func(id string)) *sessions {
	return &sessions{byID: map[string]*session{}, oneTime: map[string]*session{}, now: time.Now, onExpire: onExpire}
}

// randomID returns 32 random bytes, URL-safe.
func randomID() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// open starts a session for config and returns it.
func (s *sessions) open(user string, home logicalcluster.Path, config *rest.Config) *session {
	s.mu.Lock()
	defer s.mu.Unlock()
	sess := &session{id: randomID(), user: user, home: home, config: config, lastSeen: s.now()}
	s.byID[sess.id] = sess
	return sess
}

// link returns a token that opens a session for config once, for a URL
// printed to the one who started the board.
func (s *sessions) link(user string, home logicalcluster.Path, config *rest.Config) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	token := randomID()
	s.oneTime[token] = &session{user: user, home: home, config: config}
	return token
}

// redeem turns a one-time token into a session; a token works once.
func (s *sessions) redeem(token string) (*session, bool) {
	s.mu.Lock()
	pending, ok := s.oneTime[token]
	delete(s.oneTime, token)
	s.mu.Unlock()
	if !ok {
		return nil, false
	}
	return s.open(pending.user, pending.home, pending.config), true
}

// of returns the session of a request's cookie.
func (s *sessions) of(r *http.Request) (*session, bool) {
	c, err := r.Cookie(sessionCookie)
	if err != nil {
		return nil, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sess, ok := s.byID[c.Value]
	if !ok {
		return nil, false
	}
	if s.now().Sub(sess.lastSeen) > sessionIdle {
		s.closeLocked(sess.id)
		return nil, false
	}
	sess.lastSeen = s.now()
	return sess, true
}

func (s *sessions) close(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closeLocked(id)
}

func (s *sessions) closeLocked(id string) {
	if _, ok := s.byID[id]; !ok {
		return
	}
	delete(s.byID, id)
	if s.onExpire != nil {
		go s.onExpire(id)
	}
}

// expire closes the sessions idle for longer than sessionIdle.
func (s *sessions) expire() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, sess := range s.byID {
		if s.now().Sub(sess.lastSeen) > sessionIdle {
			s.closeLocked(id)
		}
	}
}

func setSessionCookie(w http.ResponseWriter, r *http.Request, id string) {
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: id, Path: "/", HttpOnly: true,
		Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode})
}

// tokenConfig is base with the caller's bearer token as its only
// credential: whatever base authenticates with (the kubeconfig's client
// certificate, say) is dropped.
func tokenConfig(base *rest.Config, token string) *rest.Config {
	cfg := rest.AnonymousClientConfig(base)
	cfg.BearerToken = token
	return cfg
}

// whoAmI asks the hub who config authenticates as, in the workspace at
// path: a token the hub does not accept there is refused at sign-in
// rather than on every view.
func whoAmI(ctx context.Context, config *rest.Config, path logicalcluster.Path) (string, error) {
	kube, err := kubernetes.NewForConfig(inWorkspace(config, path))
	if err != nil {
		return "", err
	}
	review, err := kube.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("the hub did not accept this token in workspace %s: %w", path, err)
	}
	return review.Status.UserInfo.Username, nil
}
