package localfleet

import (
	"context"
	"fmt"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
)

// TeamAdmin returns the config of a real, non-admin identity: a service
// account of the workspace at path that is cluster-admin in that workspace
// only, as a platform admin would hand a team. Tenant features are tested
// with it, never with the hub admin.
func (h *Hub) TeamAdmin(ctx context.Context, path, name string) (*rest.Config, error) {
	kube, err := kubernetes.NewForConfig(h.Config(path))
	if err != nil {
		return nil, err
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}}
	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name + ":cluster-admin"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: sa.Namespace, Name: name}},
	}
	err = retry(ctx, func() error {
		if _, err := kube.CoreV1().ServiceAccounts(sa.Namespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
		if _, err := kube.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("creating team identity %s in %s: %w", name, path, err)
	}
	cfg, err := h.ServiceAccountConfig(ctx, path, sa.Namespace, name)
	if err != nil {
		return nil, err
	}
	return cfg, waitAllowed(ctx, cfg, path, name)
}

// waitAllowed waits until the hub authenticates the identity of cfg and
// lets it create namespaces: the hub learns of a new service account and
// its binding from informers, so a request sent at once may be refused.
func waitAllowed(ctx context.Context, cfg *rest.Config, path, name string) error {
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
		ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "create", Version: "v1", Resource: "namespaces"},
	}}
	var last string
	err = poll(ctx, func(ctx context.Context) (bool, error) {
		got, err := kube.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
		switch {
		case err != nil:
			last = err.Error()
		case !got.Status.Allowed:
			last = "not allowed: " + got.Status.Reason
		}
		return err == nil && got.Status.Allowed, nil
	})
	if err != nil {
		return fmt.Errorf("team identity %s in %s cannot create namespaces (%s): %w", name, path, last, err)
	}
	return nil
}

// ServiceAccountConfig returns a config for the workspace at path that
// authenticates as a service account of that workspace, with a bound token
// valid for two hours (longer than any suite).
func (h *Hub) ServiceAccountConfig(ctx context.Context, path, namespace, name string) (*rest.Config, error) {
	kube, err := kubernetes.NewForConfig(h.Config(path))
	if err != nil {
		return nil, err
	}
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64((2 * time.Hour).Seconds()))}}
	var token string
	err = retry(ctx, func() error {
		got, err := kube.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name, req, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		token = got.Status.Token
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("issuing a token for %s/%s in %s: %w", namespace, name, path, err)
	}
	return h.WithToken(path, token), nil
}

// WithToken returns a config for the workspace at path that authenticates
// with token alone (no admin credentials).
func (h *Hub) WithToken(path, token string) *rest.Config {
	admin := h.Config(path)
	return &rest.Config{
		Host:            admin.Host,
		BearerToken:     token,
		TLSClientConfig: rest.TLSClientConfig{CAData: admin.CAData, CAFile: admin.CAFile, Insecure: admin.Insecure, ServerName: admin.ServerName},
		QPS:             admin.QPS,
		Burst:           admin.Burst,
	}
}

// WriteKubeconfig writes a kubeconfig for a token config (WithToken,
// TeamAdmin), for commands run as that identity.
func WriteKubeconfig(cfg *rest.Config, file string) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["hub"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData, CertificateAuthority: cfg.CAFile,
		InsecureSkipTLSVerify: cfg.Insecure, TLSServerName: cfg.ServerName}
	kc.AuthInfos["identity"] = &clientcmdapi.AuthInfo{Token: cfg.BearerToken}
	kc.Contexts["workspace"] = &clientcmdapi.Context{Cluster: "hub", AuthInfo: "identity"}
	kc.CurrentContext = "workspace"
	return clientcmd.WriteToFile(*kc, file)
}
