package ws

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	tenancyv1alpha1 "github.com/kcp-dev/kcp/sdk/apis/tenancy/v1alpha1"
	kcpclient "github.com/kcp-dev/kcp/sdk/client/clientset/versioned"
	"github.com/kcp-dev/logicalcluster/v3"
	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// options carries what every ws subcommand needs: the kubeconfig and streams.
type options struct {
	flags   *genericclioptions.ConfigFlags
	streams genericiooptions.IOStreams
}

// NewCommand returns `ws`: `ws <workspace>` enters a workspace, and the
// subcommands create, list and show workspaces.
func NewCommand(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &options{flags: flags, streams: streams}
	cmd := &cobra.Command{
		Use:   "ws [use] <workspace>",
		Short: "Move between workspaces (same kubeconfig conventions as kcp's kubectl ws)",
		Example: `  kubectl fleet ws :root:teams:team-a   # absolute path
  kubectl fleet ws team-b               # child of the current workspace
  kubectl fleet ws ..                   # parent
  kubectl fleet ws -                    # previous workspace
  kubectl fleet ws create team-c --enter`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return o.current(false)
			}
			return o.use(cmd.Context(), args[0])
		},
	}
	cmd.AddCommand(
		&cobra.Command{
			Use:     "use <workspace>",
			Short:   "Enter a workspace",
			Example: `  kubectl fleet ws use :root:teams:team-a`,
			Args:    cobra.ExactArgs(1),
			RunE:    func(cmd *cobra.Command, args []string) error { return o.use(cmd.Context(), args[0]) },
		},
		o.currentCommand(),
		o.createCommand(),
		&cobra.Command{
			Use:     "tree",
			Short:   "Show the workspaces below the current one",
			Example: `  kubectl fleet ws :root && kubectl fleet ws tree`,
			Args:    cobra.NoArgs,
			RunE:    func(cmd *cobra.Command, _ []string) error { return o.tree(cmd.Context()) },
		},
	)
	return cmd
}

func (o *options) currentCommand() *cobra.Command {
	var short bool
	cmd := &cobra.Command{
		Use:     "current",
		Short:   "Print the current workspace",
		Example: `  kubectl fleet ws current --short`,
		Args:    cobra.NoArgs,
		RunE:    func(*cobra.Command, []string) error { return o.current(short) },
	}
	cmd.Flags().BoolVar(&short, "short", false, "print only the workspace path")
	return cmd
}

func (o *options) createCommand() *cobra.Command {
	var (
		wsType, location string
		enter            bool
		ignoreExisting   bool
	)
	cmd := &cobra.Command{
		Use:   "create <name>",
		Short: "Create a workspace in the current workspace and wait until it is ready",
		Example: `  kubectl fleet ws :root:teams && kubectl fleet ws create team-a --enter
  kubectl fleet ws create platform-tools --type universal
  kubectl fleet ws create team-b --location-selector name=shard-1   # on the shard named shard-1`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ws, err := newWorkspace(args[0], wsType, location)
			if err != nil {
				return err
			}
			return o.create(cmd.Context(), ws, enter, ignoreExisting)
		},
	}
	cmd.Flags().StringVar(&wsType, "type", "", "workspace type, [path:]name (default: the parent's default child type; fleet-team inside root:teams)")
	cmd.Flags().StringVar(&location, "location-selector", "", "a label selector of the shards the workspace may land on, such as name=shard-1 (default: any shard kcp picks)")
	cmd.Flags().BoolVar(&enter, "enter", false, "enter the workspace once it is ready")
	cmd.Flags().BoolVar(&ignoreExisting, "ignore-existing", false, "succeed if the workspace already exists")
	return cmd
}

func (o *options) rawConfig() (*clientcmdapi.Config, error) {
	cfg, err := o.flags.ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		return nil, err
	}
	if o.flags.Context != nil && *o.flags.Context != "" {
		cfg.CurrentContext = *o.flags.Context
	}
	return &cfg, nil
}

// clientFor returns a kcp client for the workspace at path, using the
// credentials of the current context.
func (o *options) clientFor(path logicalcluster.Path) (kcpclient.Interface, error) {
	cfg, err := o.flags.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	cur, err := parseServer(cfg.Host)
	if err != nil {
		return nil, err
	}
	cfg = rest.CopyConfig(cfg)
	cfg.Host = cur.withPath(path)
	return kcpclient.NewForConfig(cfg)
}

func (o *options) current(short bool) error {
	cfg, err := o.rawConfig()
	if err != nil {
		return err
	}
	cur, err := currentWorkspace(cfg)
	if err != nil {
		return err
	}
	if short {
		fmt.Fprintln(o.streams.Out, cur.path)
		return nil
	}
	fmt.Fprintf(o.streams.Out, "Current workspace is %q.\n", cur.path)
	return nil
}

func (o *options) use(ctx context.Context, arg string) error {
	cfg, err := o.rawConfig()
	if err != nil {
		return err
	}
	if arg == "-" {
		if err := swapPrevious(cfg); err != nil {
			return err
		}
	} else {
		cur, err := currentWorkspace(cfg)
		if err != nil {
			return err
		}
		target, err := resolve(cur.path, arg)
		if err != nil {
			return err
		}
		if err := o.checkExists(ctx, target); err != nil {
			return err
		}
		if err := switchTo(cfg, target); err != nil {
			return err
		}
	}
	if err := writeConfig(o.flags.ToRawKubeConfigLoader().ConfigAccess(), cfg); err != nil {
		return err
	}
	// Print from cfg: the loader caches the kubeconfig it read before the write.
	now, err := currentWorkspace(cfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(o.streams.Out, "Current workspace is %q.\n", now.path)
	return nil
}

// checkExists looks the workspace up in its parent so that a typo is reported
// instead of producing a context that points nowhere.
func (o *options) checkExists(ctx context.Context, path logicalcluster.Path) error {
	parent, name := path.Split()
	if parent.Empty() {
		return nil // root
	}
	c, err := o.clientFor(parent)
	if err != nil {
		return err
	}
	ws, err := c.TenancyV1alpha1().Workspaces().Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("workspace %q not found; list existing ones with: kubectl fleet ws tree", path)
	}
	if err != nil {
		return fmt.Errorf("looking up workspace %q: %w", path, err)
	}
	if ws.Status.Phase != "Ready" {
		return fmt.Errorf("workspace %q is %s, not Ready yet; try again in a moment", path, ws.Status.Phase)
	}
	return nil
}

// newWorkspace is the workspace create asks for: of the given type
// ([path:]name) and on a shard matching the location selector, where set.
func newWorkspace(name, wsType, location string) (*tenancyv1alpha1.Workspace, error) {
	ws := &tenancyv1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if wsType != "" {
		typePath, typeName := logicalcluster.NewPath(wsType).Split()
		ws.Spec.Type = &tenancyv1alpha1.WorkspaceTypeReference{Path: typePath.String(), Name: tenancyv1alpha1.WorkspaceTypeName(typeName)}
	}
	if location != "" {
		selector, err := metav1.ParseToLabelSelector(location)
		if err != nil {
			return nil, fmt.Errorf("--location-selector %q is not a label selector (such as name=shard-1): %w", location, err)
		}
		ws.Spec.Location = &tenancyv1alpha1.WorkspaceLocation{Selector: selector}
	}
	return ws, nil
}

func (o *options) create(ctx context.Context, ws *tenancyv1alpha1.Workspace, enter, ignoreExisting bool) error {
	cfg, err := o.rawConfig()
	if err != nil {
		return err
	}
	cur, err := currentWorkspace(cfg)
	if err != nil {
		return err
	}
	c, err := o.clientFor(cur.path)
	if err != nil {
		return err
	}
	name := ws.Name
	created, err := c.TenancyV1alpha1().Workspaces().Create(ctx, ws, metav1.CreateOptions{})
	switch {
	case apierrors.IsAlreadyExists(err) && ignoreExisting:
	case err != nil:
		return fmt.Errorf("creating workspace %q in %q: %w", name, cur.path, err)
	default:
		fmt.Fprintf(o.streams.Out, "Workspace %q (type %s) created. Waiting for it to be ready...\n", name, typeName(created))
	}
	if err := WaitReady(ctx, c, name, o.streams.ErrOut); err != nil {
		return err
	}
	fmt.Fprintf(o.streams.Out, "Workspace %q is ready.\n", cur.path.Join(name))
	if !enter {
		return nil
	}
	return o.use(ctx, cur.path.Join(name).String())
}

func typeName(ws *tenancyv1alpha1.Workspace) string {
	if ws.Spec.Type == nil {
		return "default"
	}
	return logicalcluster.NewPath(ws.Spec.Type.Path).Join(string(ws.Spec.Type.Name)).String()
}

// WaitReady polls until the workspace is Ready, printing phase changes so a
// slow initialisation is visible.
func WaitReady(ctx context.Context, c kcpclient.Interface, name string, progress io.Writer) error {
	var lastPhase string
	err := wait.PollUntilContextTimeout(ctx, 300*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		ws, err := c.TenancyV1alpha1().Workspaces().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		if phase := string(ws.Status.Phase); phase != lastPhase && phase != "" {
			fmt.Fprintf(progress, "  phase: %s\n", phase)
			lastPhase = phase
		}
		return ws.Status.Phase == "Ready", nil
	})
	if err != nil {
		return fmt.Errorf("workspace %q did not become ready (last phase %q): %w", name, lastPhase, err)
	}
	return nil
}

func (o *options) tree(ctx context.Context) error {
	cfg, err := o.rawConfig()
	if err != nil {
		return err
	}
	cur, err := currentWorkspace(cfg)
	if err != nil {
		return err
	}
	fmt.Fprintln(o.streams.Out, cur.path)
	return o.printChildren(ctx, cur.path, "")
}

func (o *options) printChildren(ctx context.Context, path logicalcluster.Path, indent string) error {
	c, err := o.clientFor(path)
	if err != nil {
		return err
	}
	list, err := c.TenancyV1alpha1().Workspaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("listing workspaces in %q: %w", path, err)
	}
	for i, ws := range list.Items {
		branch, next := "├── ", "│   "
		if i == len(list.Items)-1 {
			branch, next = "└── ", "    "
		}
		fmt.Fprintf(o.streams.Out, "%s%s%s%s\n", indent, branch, ws.Name, describe(ws))
		// A workspace that is not Ready serves no workspaces of its own yet.
		if ws.Status.Phase != "Ready" {
			continue
		}
		if err := o.printChildren(ctx, path.Join(ws.Name), indent+next); err != nil {
			return err
		}
	}
	return nil
}

func describe(ws tenancyv1alpha1.Workspace) string {
	var parts []string
	if ws.Spec.Type != nil {
		parts = append(parts, "type "+string(ws.Spec.Type.Name))
	}
	if ws.Status.Phase != "Ready" {
		parts = append(parts, string(ws.Status.Phase))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}
