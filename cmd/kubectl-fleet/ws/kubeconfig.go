// Package ws implements `kubectl fleet ws`: moving a kubeconfig between kcp
// workspaces the way kcp's own `kubectl ws` plugin does, so both can be mixed.
package ws

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/kcp-dev/logicalcluster/v3"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// kcp's kubeconfig conventions: `use` points this context (and a cluster entry
// of the same name) at the chosen workspace and keeps the previous one.
const (
	currentContext  = "workspace.kcp.io/current"
	previousContext = "workspace.kcp.io/previous"
)

// workspaceURL splits a kcp server URL into its base and workspace path.
type workspaceURL struct {
	base *url.URL
	path logicalcluster.Path
}

func parseServer(server string) (workspaceURL, error) {
	u, err := url.Parse(server)
	if err != nil {
		return workspaceURL{}, fmt.Errorf("server URL %q: %w", server, err)
	}
	i := strings.Index(u.Path, "/clusters/")
	if i < 0 {
		return workspaceURL{}, fmt.Errorf("server URL %q does not point at a workspace (expected .../clusters/<path>); use a kubeconfig written by fleet-hub", server)
	}
	p := logicalcluster.NewPath(strings.TrimSuffix(u.Path[i+len("/clusters/"):], "/"))
	if !p.IsValid() {
		return workspaceURL{}, fmt.Errorf("server URL %q has an invalid workspace path %q", server, p)
	}
	base := *u
	base.Path = u.Path[:i]
	return workspaceURL{base: &base, path: p}, nil
}

func (w workspaceURL) withPath(p logicalcluster.Path) string {
	u := *w.base
	u.Path = strings.TrimSuffix(u.Path, "/") + p.RequestPath()
	return u.String()
}

// currentWorkspace returns the workspace URL of the kubeconfig's current context.
func currentWorkspace(cfg *clientcmdapi.Config) (workspaceURL, error) {
	ctx, ok := cfg.Contexts[cfg.CurrentContext]
	if !ok {
		return workspaceURL{}, fmt.Errorf("kubeconfig has no current context; set one with kubectl config use-context")
	}
	cluster, ok := cfg.Clusters[ctx.Cluster]
	if !ok {
		return workspaceURL{}, fmt.Errorf("context %q refers to unknown cluster %q", cfg.CurrentContext, ctx.Cluster)
	}
	return parseServer(cluster.Server)
}

// switchTo points the current context at path and remembers the old context as
// the previous one, which `ws -` returns to.
func switchTo(cfg *clientcmdapi.Config, path logicalcluster.Path) error {
	cur, err := currentWorkspace(cfg)
	if err != nil {
		return err
	}
	oldCtx := cfg.Contexts[cfg.CurrentContext].DeepCopy()
	oldCluster := cfg.Clusters[oldCtx.Cluster].DeepCopy()

	newCluster := oldCluster.DeepCopy()
	newCluster.Server = cur.withPath(path)
	newCtx := oldCtx.DeepCopy()
	newCtx.Cluster = currentContext

	cfg.Clusters[previousContext] = oldCluster
	oldCtx.Cluster = previousContext
	cfg.Contexts[previousContext] = oldCtx
	cfg.Clusters[currentContext] = newCluster
	cfg.Contexts[currentContext] = newCtx
	cfg.CurrentContext = currentContext
	return nil
}

// swapPrevious makes the previous context current and vice versa.
func swapPrevious(cfg *clientcmdapi.Config) error {
	prev, ok := cfg.Contexts[previousContext]
	if !ok {
		return fmt.Errorf("no previous workspace to return to")
	}
	prevCluster, ok := cfg.Clusters[prev.Cluster]
	if !ok {
		return fmt.Errorf("previous context refers to unknown cluster %q", prev.Cluster)
	}
	prevPath, err := parseServer(prevCluster.Server)
	if err != nil {
		return err
	}
	return switchTo(cfg, prevPath.path)
}

// resolve turns a user argument into an absolute workspace path relative to cur:
// ":root:a" and "root:a" are absolute, ".." is the parent, "." is cur, anything
// else is a child path.
func resolve(cur logicalcluster.Path, arg string) (logicalcluster.Path, error) {
	switch {
	case arg == "" || arg == ".":
		return cur, nil
	case arg == "..":
		parent, ok := cur.Parent()
		if !ok {
			return cur, fmt.Errorf("workspace %s has no parent", cur)
		}
		return parent, nil
	case strings.HasPrefix(arg, ":"):
		arg = strings.TrimPrefix(arg, ":")
		if arg == "" {
			return logicalcluster.NewPath("root"), nil
		}
		return validPath(logicalcluster.NewPath(arg))
	case arg == "root" || strings.HasPrefix(arg, "root:"):
		return validPath(logicalcluster.NewPath(arg))
	default:
		p := cur
		for _, seg := range strings.Split(arg, ":") {
			if seg == ".." {
				parent, ok := p.Parent()
				if !ok {
					return cur, fmt.Errorf("workspace %s has no parent", p)
				}
				p = parent
				continue
			}
			p = p.Join(seg)
		}
		return validPath(p)
	}
}

func validPath(p logicalcluster.Path) (logicalcluster.Path, error) {
	if !p.IsValid() {
		return p, fmt.Errorf("%q is not a valid workspace path (segments are lowercase names separated by ':')", p)
	}
	return p, nil
}

// writeConfig persists cfg to the file(s) the loading rules read it from.
func writeConfig(access clientcmd.ConfigAccess, cfg *clientcmdapi.Config) error {
	return clientcmd.ModifyConfig(access, *cfg, true)
}
