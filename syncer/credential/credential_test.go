package credential

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	k8stesting "k8s.io/client-go/testing"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// jwt builds an unsigned token with a service account's claims; the syncer
// only reads them (the hub verifies tokens).
func jwt(t *testing.T, sub, uid string, issued time.Time, life time.Duration) string {
	t.Helper()
	claims := map[string]any{"sub": sub, "iat": issued.Unix(), "exp": issued.Add(life).Unix(),
		"kubernetes.io": map[string]any{"serviceaccount": map[string]any{"uid": uid}}}
	raw, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	return "e30." + base64.RawURLEncoding.EncodeToString(raw) + ".sig"
}

func TestParse(t *testing.T) {
	now := time.Now().Truncate(time.Second)
	tok, err := Parse(jwt(t, "system:serviceaccount:fleet-system:fleet-syncer-m1", "u1", now, time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if tok.claims.namespace != "fleet-system" || tok.claims.name != "fleet-syncer-m1" || !tok.Expiry().Equal(now.Add(time.Hour)) {
		t.Errorf("claims = %+v", tok.claims)
	}
	for name, bad := range map[string]string{
		"a static token":     "abc",
		"a user's token":     jwt(t, "alice", "", now, time.Hour),
		"a token that lasts": jwt(t, "system:serviceaccount:a:b", "u1", now, -time.Duration(now.Unix())*time.Second),
	} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("%s: parsed, want an error", name)
		}
	}
}

func TestSetTakesOnlyANewerTokenOfTheSameAccount(t *testing.T) {
	now := time.Now().Truncate(time.Second)
	sub := "system:serviceaccount:fleet-system:fleet-syncer-m1"
	first := jwt(t, sub, "u1", now, time.Hour)
	tok, err := Parse(first)
	if err != nil {
		t.Fatal(err)
	}
	if err := tok.set(jwt(t, sub, "u1", now.Add(-time.Minute), time.Hour)); err != nil || tok.Value() != first {
		t.Errorf("an older token replaced the current one (err %v)", err)
	}
	if err := tok.set(jwt(t, sub, "u0", now.Add(time.Minute), time.Hour)); err == nil || tok.Value() != first {
		t.Errorf("a token of an earlier account of the same name was taken (err %v)", err)
	}
	if err := tok.set(jwt(t, "system:serviceaccount:fleet-system:fleet-syncer-m2", "u1", now.Add(time.Minute), time.Hour)); err == nil {
		t.Errorf("another account's token was taken")
	}
	newer := jwt(t, sub, "u1", now.Add(time.Minute), time.Hour)
	if err := tok.set(newer); err != nil || tok.Value() != newer {
		t.Errorf("the newer token was not taken (err %v)", err)
	}
}

func TestAuthenticateSendsTheCurrentToken(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Get("Authorization"))
	}))
	defer srv.Close()
	now := time.Now().Truncate(time.Second)
	sub := "system:serviceaccount:fleet-system:fleet-syncer-m1"
	tok, err := Parse(jwt(t, sub, "u1", now, time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	cfg := &rest.Config{Host: srv.URL, BearerToken: "stale"}
	tok.Authenticate(cfg)
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	get := func() {
		req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
		resp, err := rt.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	get()
	first := tok.Value()
	renewed := jwt(t, sub, "u1", now.Add(time.Minute), time.Hour)
	if err := tok.set(renewed); err != nil {
		t.Fatal(err)
	}
	get()
	if len(got) != 2 || got[0] != "Bearer "+first || got[1] != "Bearer "+renewed {
		t.Errorf("Authorization headers = %v", got)
	}
}

func TestRenewBeforeExpiryAndStore(t *testing.T) {
	now := time.Now()
	sub := "system:serviceaccount:fleet-system:fleet-syncer-m1"
	// A token of 2 seconds is renewed after 1.4.
	tok, err := Parse(jwt(t, sub, "u1", now, 2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	renewed := jwt(t, sub, "u1", now.Add(time.Second), time.Hour)
	hub := kubefake.NewSimpleClientset()
	var asked *authenticationv1.TokenRequest
	hub.PrependReactor("create", "serviceaccounts", func(action k8stesting.Action) (bool, runtime.Object, error) {
		create := action.(k8stesting.CreateAction)
		if action.GetSubresource() != "token" || action.GetNamespace() != "fleet-system" {
			return false, nil, nil
		}
		asked = create.GetObject().(*authenticationv1.TokenRequest)
		return true, &authenticationv1.TokenRequest{Status: authenticationv1.TokenRequestStatus{Token: renewed}}, nil
	})
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	member := fake.NewClientBuilder().WithScheme(s).Build()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go tok.Renew(ctx, hub, Store{Member: member})

	if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		return tok.Value() == renewed, nil
	}); err != nil {
		t.Fatalf("the token was not renewed: %v", err)
	}
	if asked == nil || asked.Spec.ExpirationSeconds == nil || *asked.Spec.ExpirationSeconds != 2 {
		t.Errorf("token request = %+v, want the same lifetime (2s)", asked)
	}
	stored, err := Parse(jwt(t, sub, "u1", now.Add(-time.Hour), time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if err := (Store{Member: member}).Load(ctx, stored); err != nil || stored.Value() != renewed {
		t.Errorf("a restarted syncer starts from %q (err %v), want the renewed token", stored.Value(), err)
	}
}
