package ws

import (
	"testing"

	"github.com/kcp-dev/logicalcluster/v3"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

func TestResolve(t *testing.T) {
	cur := logicalcluster.NewPath("root:teams")
	tests := []struct {
		arg, want string
		wantErr   bool
	}{
		{arg: "", want: "root:teams"},
		{arg: ".", want: "root:teams"},
		{arg: "..", want: "root"},
		{arg: "team-a", want: "root:teams:team-a"},
		{arg: "team-a:sub", want: "root:teams:team-a:sub"},
		{arg: "..:fleet", want: "root:fleet"},
		{arg: ":root:fleet", want: "root:fleet"},
		{arg: ":", want: "root"},
		{arg: "root:fleet", want: "root:fleet"},
		{arg: "Team_A", wantErr: true},
	}
	for _, tc := range tests {
		got, err := resolve(cur, tc.arg)
		if tc.wantErr {
			if err == nil {
				t.Errorf("resolve(%q) = %q, want an error", tc.arg, got)
			}
			continue
		}
		if err != nil || got.String() != tc.want {
			t.Errorf("resolve(%q) = %q, %v; want %q", tc.arg, got, err, tc.want)
		}
	}
	if _, err := resolve(logicalcluster.NewPath("root"), ".."); err == nil {
		t.Errorf("resolve(root, ..) must fail: root has no parent")
	}
}

func TestParseServer(t *testing.T) {
	w, err := parseServer("https://127.0.0.1:6443/clusters/root:teams")
	if err != nil {
		t.Fatal(err)
	}
	if w.path.String() != "root:teams" || w.withPath(logicalcluster.NewPath("root:fleet")) != "https://127.0.0.1:6443/clusters/root:fleet" {
		t.Errorf("got path %q, url %q", w.path, w.withPath(logicalcluster.NewPath("root:fleet")))
	}
	if _, err := parseServer("https://127.0.0.1:6443"); err == nil {
		t.Errorf("a server URL without /clusters/ must be refused")
	}
}

func TestSwitchAndBack(t *testing.T) {
	cfg := &clientcmdapi.Config{
		Clusters:       map[string]*clientcmdapi.Cluster{"root": {Server: "https://hub:6443/clusters/root", CertificateAuthorityData: []byte("ca")}},
		AuthInfos:      map[string]*clientcmdapi.AuthInfo{"admin": {Token: "t"}},
		Contexts:       map[string]*clientcmdapi.Context{"root": {Cluster: "root", AuthInfo: "admin"}},
		CurrentContext: "root",
	}
	if err := switchTo(cfg, logicalcluster.NewPath("root:teams:a")); err != nil {
		t.Fatal(err)
	}
	assertCurrent(t, cfg, "root:teams:a")
	if got := cfg.Clusters[currentContext].CertificateAuthorityData; string(got) != "ca" {
		t.Errorf("the CA of the original cluster must be kept, got %q", got)
	}
	if got := cfg.Contexts[currentContext].AuthInfo; got != "admin" {
		t.Errorf("the credentials of the original context must be kept, got %q", got)
	}
	if err := switchTo(cfg, logicalcluster.NewPath("root:fleet")); err != nil {
		t.Fatal(err)
	}
	if err := swapPrevious(cfg); err != nil {
		t.Fatal(err)
	}
	assertCurrent(t, cfg, "root:teams:a")
	if err := swapPrevious(cfg); err != nil {
		t.Fatal(err)
	}
	assertCurrent(t, cfg, "root:fleet")
}

func assertCurrent(t *testing.T, cfg *clientcmdapi.Config, want string) {
	t.Helper()
	cur, err := currentWorkspace(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.CurrentContext != currentContext || cur.path.String() != want {
		t.Errorf("current context %q at %q, want %q at %q", cfg.CurrentContext, cur.path, currentContext, want)
	}
}
