// Package huburl points hub URLs at workspaces: a kcp URL names its
// workspace in its path (/clusters/<path>).
package huburl

import (
	"net/url"
	"strings"

	"github.com/kcp-dev/logicalcluster/v3"
)

// Base is a hub URL without the workspace it names: the kcp base URL.
func Base(host string) string {
	u, err := url.Parse(host)
	if err != nil {
		return host
	}
	if i := strings.Index(u.Path, "/clusters/"); i >= 0 {
		u.Path = u.Path[:i]
	}
	return u.String()
}

// For points a hub URL at the workspace at path, whatever workspace it
// names.
func For(host string, path logicalcluster.Path) string {
	return strings.TrimSuffix(Base(host), "/") + path.RequestPath()
}
