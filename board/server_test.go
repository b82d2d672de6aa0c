package board

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kcp-dev/logicalcluster/v3"
	"k8s.io/client-go/rest"
)

func TestALinkSignsInOnce(t *testing.T) {
	s := New(&rest.Config{Host: "https://hub.example:6443"})
	token := s.sessions.link("admin", logicalcluster.NewPath("root:fleet"), &rest.Config{Host: "https://hub.example:6443"})

	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/login?token="+token, nil))
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("first use: %d %s", rec.Code, rec.Body)
	}
	cookie := rec.Result().Cookies()[0]
	if cookie.Name != sessionCookie || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode {
		t.Errorf("cookie = %+v: want an HttpOnly, SameSite=Strict session cookie", cookie)
	}

	rec = httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/login?token="+token, nil))
	if rec.Code != http.StatusForbidden {
		t.Errorf("second use: %d, want 403", rec.Code)
	}
}

func TestTheAPIWantsASession(t *testing.T) {
	s := New(&rest.Config{Host: "https://hub.example:6443"})
	for _, path := range []string{"/api/session", "/api/view?view=clusters", "/api/view?view=placement&name=x", "/api/stream?view=events"} {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if rec.Code != http.StatusUnauthorized {
			t.Errorf("%s without a session: %d, want 401", path, rec.Code)
		}
	}
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/api/session", nil)
	req.AddCookie(&http.Cookie{Name: sessionCookie, Value: "made-up"})
	s.ServeHTTP(rec, req)
	if rec.Code != http.StatusUnauthorized {
		t.Errorf("an unknown session: %d, want 401", rec.Code)
	}
}

func TestChangesNeedTheBoardsHeader(t *testing.T) {
	s := New(&rest.Config{Host: "https://hub.example:6443"})
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/api/signin", strings.NewReader(`{"token":"t","workspace":"root:teams:a"}`)))
	if rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), csrfHeader) {
		t.Errorf("a sign-in without %s: %d %s", csrfHeader, rec.Code, rec.Body)
	}
}

func TestSignInNamesWhatIsMissing(t *testing.T) {
	s := New(&rest.Config{Host: "https://hub.example:6443"})
	for body, want := range map[string]string{
		`{"token":"t","workspace":"not a path"}`:   "is not a workspace path",
		`{"token":" ","workspace":"root:teams:a"}`: "no token",
		`not json`: "not JSON",
	} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/api/signin", strings.NewReader(body))
		req.Header.Set(csrfHeader, "1")
		s.ServeHTTP(rec, req)
		if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), want) {
			t.Errorf("sign-in with %s: %d %s, want 400 saying %q", body, rec.Code, rec.Body, want)
		}
	}
}

func TestTheTokenReplacesTheKubeconfigsCredentials(t *testing.T) {
	base := &rest.Config{Host: "https://hub.example:6443", TLSClientConfig: rest.TLSClientConfig{CertData: []byte("admin cert"), KeyData: []byte("admin key"), CAData: []byte("ca")}}
	cfg := tokenConfig(base, "team-token")
	if cfg.BearerToken != "team-token" || len(cfg.CertData) != 0 || len(cfg.KeyData) != 0 || string(cfg.CAData) != "ca" {
		t.Errorf("token config = %+v: want the token alone, and the hub's CA", cfg)
	}
}

func TestThePageIsServed(t *testing.T) {
	s := New(&rest.Config{Host: "https://hub.example:6443"})
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "Fleetplane board") {
		t.Errorf("GET /: %d %s", rec.Code, rec.Body)
	}
	if rec.Header().Get("Content-Security-Policy") == "" {
		t.Error("the page has no Content-Security-Policy")
	}
}

func TestTheBoardListensOnLoopbackOnly(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.0.2.1:0"} {
		if ln, err := ListenLoopback(addr); err == nil {
			ln.Close()
			t.Errorf("ListenLoopback(%q) listened", addr)
		}
	}
	ln, err := ListenLoopback("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
}
