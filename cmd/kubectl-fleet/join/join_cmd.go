package join

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	tenancyv1alpha1 "github.com/fleetplane/fleetplane/apis/tenancy/v1alpha1"
)

type joinOptions struct {
	memberKubeconfig string
	labels           map[string]string
	heartbeat        int32
	run              bool
	stateDir         string
	image            string
	timeout          time.Duration
	tokenLifetime    time.Duration
	metricsAddress   string
	syncerVerbosity  int
}

// NewJoinCommand returns `kubectl fleet join NAME`.
func NewJoinCommand(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &options{flags: flags, streams: streams}
	j := joinOptions{}
	cmd := &cobra.Command{
		Use:   "join NAME --member-kubeconfig FILE [--labels k=v,...] [--run]",
		Short: "Register a member cluster with the fleet and run its syncer",
		Long: `Registers the cluster as a MemberCluster in root:fleet, creates a hub
credential that can only read the cluster's own Work and report its status,
and then either starts the syncer locally (--run) or prints the manifests that
run it inside the member cluster. Run it with hub admin credentials.`,
		Example: `  kubectl fleet join member-1 --member-kubeconfig member-1.kubeconfig --labels env=prod,region=eastus --run
  kubectl fleet join member-2 --member-kubeconfig member-2.kubeconfig | kubectl --kubeconfig member-2.kubeconfig apply -f -`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.join(cmd.Context(), args[0], j)
		},
	}
	f := cmd.Flags()
	f.StringVar(&j.memberKubeconfig, "member-kubeconfig", "", "kubeconfig of the member cluster (required)")
	f.StringToStringVar(&j.labels, "labels", nil, "labels of the MemberCluster, used by placement policies (e.g. env=prod,region=eastus)")
	f.Int32Var(&j.heartbeat, "heartbeat-period-seconds", 60, "how often the syncer reports (1-600)")
	f.BoolVar(&j.run, "run", false, "start the syncer on this machine instead of printing manifests for the member cluster")
	f.StringVar(&j.stateDir, "state-dir", defaultStateDir(), "with --run: where the syncer's kubeconfig, log and pid are kept")
	f.StringVar(&j.image, "image", "fleetplane/fleet-syncer:latest", "without --run: the syncer image the printed Deployment uses (built from cmd/fleet-syncer)")
	f.DurationVar(&j.timeout, "timeout", 2*time.Minute, "with --run: how long to wait for the member to join")
	f.DurationVar(&j.tokenLifetime, "token-lifetime", time.Hour, "lifetime of the syncer's hub token; the syncer renews it before it expires (a syncer stopped for longer needs `join` again)")
	f.StringVar(&j.metricsAddress, "metrics-bind-address", "0", "with --run: host:port the local syncer serves its Prometheus metrics on (0: off, as several local syncers share the machine); in-cluster syncers serve them on :8090")
	f.IntVar(&j.syncerVerbosity, "syncer-verbosity", 0, "with --run: the local syncer's log verbosity (its -v); 2 logs every object it creates, takes over, updates, releases or deletes")
	_ = cmd.MarkFlagRequired("member-kubeconfig")
	return cmd
}

func (o *options) join(ctx context.Context, name string, j joinOptions) error {
	if err := checkMember(j.memberKubeconfig); err != nil {
		return err
	}
	c, hubCfg, err := o.hubClient()
	if err != nil {
		return err
	}
	token, err := o.mintCredential(ctx, c, hubCfg, name, j.tokenLifetime)
	if err != nil {
		return err
	}
	if err := o.registerMember(ctx, c, name, j); err != nil {
		return err
	}
	hubKubeconfig, err := syncerHubKubeconfig(hubCfg, token)
	if err != nil {
		return err
	}
	if !j.run {
		return printManifests(o.streams.Out, name, hubKubeconfig, j.image)
	}
	if err := startLocalSyncer(j.stateDir, name, j.memberKubeconfig, hubKubeconfig, j.metricsAddress, j.syncerVerbosity); err != nil {
		return err
	}
	o.progress("Syncer for %s started on this machine (log: %s).", name, logPath(j.stateDir, name))
	return o.waitJoined(ctx, c, name, j.timeout, o.streams.Out)
}

// checkMember fails early, with the reason, if the member is unreachable.
func checkMember(path string) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return fmt.Errorf("reading --member-kubeconfig %s: %w", path, err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	if _, err := dc.ServerVersion(); err != nil {
		return fmt.Errorf("the member cluster in %s is not reachable: %w", path, err)
	}
	return nil
}

// mintCredential creates the syncer's ServiceAccount in root:fleet and issues
// it a short-lived bound token; the syncer renews it itself before it expires
// (the hub lets it renew its own token and nothing more). RBAC, set up by the
// hub when the MemberCluster joins, limits it to the member's own namespace.
func (o *options) mintCredential(ctx context.Context, c client.Client, hubCfg *rest.Config, member string, lifetime time.Duration) (string, error) {
	ns, sa := syncerIdentity(member)
	for _, obj := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: sa}},
	} {
		if err := c.Create(ctx, obj); client.IgnoreAlreadyExists(err) != nil {
			return "", fmt.Errorf("creating the syncer's hub identity (%T %s): %w", obj, obj.GetName(), err)
		}
	}
	kube, err := kubernetes.NewForConfig(hubCfg)
	if err != nil {
		return "", err
	}
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(lifetime.Seconds()))}}
	var token string
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		got, err := kube.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa, req, metav1.CreateOptions{})
		if err != nil {
			return false, client.IgnoreNotFound(err)
		}
		token = got.Status.Token
		return true, nil
	})
	if err != nil {
		return "", fmt.Errorf("the hub did not issue a token for %s/%s: %w", ns, sa, err)
	}
	return token, nil
}

func (o *options) registerMember(ctx context.Context, c client.Client, name string, j joinOptions) error {
	ns, sa := syncerIdentity(name)
	mc := &clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: name}}
	op, err := controllerutil.CreateOrUpdate(ctx, c, mc, func() error {
		if mc.Labels == nil {
			mc.Labels = map[string]string{}
		}
		for k, v := range j.labels {
			mc.Labels[k] = v
		}
		mc.Spec.Identity = rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: ns}
		mc.Spec.HeartbeatPeriodSeconds = j.heartbeat
		return nil
	})
	if err != nil {
		return fmt.Errorf("registering MemberCluster %s: %w", name, err)
	}
	o.progress("MemberCluster %s %s in %s.", name, op, tenancyv1alpha1.FleetWorkspace)
	return nil
}

// syncerHubKubeconfig is what the syncer uses: the hub's root:fleet
// workspace, the hub's CA, and the member's own token.
func syncerHubKubeconfig(hub *rest.Config, token string) ([]byte, error) {
	ca := hub.CAData
	if len(ca) == 0 && hub.CAFile != "" {
		var err error
		if ca, err = os.ReadFile(hub.CAFile); err != nil {
			return nil, err
		}
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["hub"] = &clientcmdapi.Cluster{Server: hub.Host, CertificateAuthorityData: ca, InsecureSkipTLSVerify: hub.Insecure}
	cfg.AuthInfos["syncer"] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["hub"] = &clientcmdapi.Context{Cluster: "hub", AuthInfo: "syncer"}
	cfg.CurrentContext = "hub"
	return clientcmd.Write(*cfg)
}
