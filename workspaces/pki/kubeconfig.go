package pki

import (
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Identity is who a client certificate names.
type Identity struct {
	User   string
	Groups []string
}

// WriteKubeconfig writes a kubeconfig whose contexts (name → server URL)
// all reach their server trusting the serving authority and authenticate
// as id with a certificate the client authority issues now; the first
// context is the current one. Everything is embedded: the file stands
// alone.
func (s Shared) WriteKubeconfig(file string, id Identity, now time.Time, contexts ...Context) error {
	serving, err := s.Authority(ServingCA)
	if err != nil {
		return err
	}
	clients, err := s.Authority(ClientCA)
	if err != nil {
		return err
	}
	certPEM, keyPEM, err := clients.Client(id.User, id.Groups, now)
	if err != nil {
		return err
	}
	kc := clientcmdapi.NewConfig()
	kc.AuthInfos[id.User] = &clientcmdapi.AuthInfo{ClientCertificateData: certPEM, ClientKeyData: keyPEM}
	for _, c := range contexts {
		kc.Clusters[c.Name] = &clientcmdapi.Cluster{Server: c.Server, CertificateAuthorityData: serving.CertPEM()}
		kc.Contexts[c.Name] = &clientcmdapi.Context{Cluster: c.Name, AuthInfo: id.User}
	}
	if len(contexts) > 0 {
		kc.CurrentContext = contexts[0].Name
	}
	return clientcmd.WriteToFile(*kc, file)
}

// Context is a kubeconfig context: a name and its server URL.
type Context struct {
	Name   string
	Server string
}
