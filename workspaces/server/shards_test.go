package server

import (
	"strings"
	"testing"
)

func TestShardOptionsSayWhatIsMissing(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts ShardOptions
		want string
	}{
		{"a hub of one", ShardOptions{}, ""},
		{"a root shard", ShardOptions{PKI: "/pki", BaseURL: "https://root:6444", ExternalURL: "https://hub:6443"}, ""},
		{"a further shard", ShardOptions{Name: "shard-1", PKI: "/pki", RootShardURL: "https://root:6444"}, ""},
		{"a further shard alone", ShardOptions{Name: "shard-1"}, "--shared-pki-dir"},
		{"a further shard without the root", ShardOptions{Name: "shard-1", PKI: "/pki"}, "--root-shard-url"},
		{"a URL without https", ShardOptions{Name: "shard-1", PKI: "/pki", RootShardURL: "http://root:6444"}, "not an https URL"},
	} {
		err := tc.opts.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: got %v, want an error naming %s", tc.name, err, tc.want)
		}
	}
}
