package main

import (
	"archive/tar"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// TestBuildWritesALoadableImage builds an image of a small file and reads
// the tarball back as `docker load` would: tag, entrypoint, user, and the
// binary in its one layer.
func TestBuildWritesALoadableImage(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "fleet-syncer")
	if err := os.WriteFile(bin, []byte("#!binary"), 0o755); err != nil {
		t.Fatal(err)
	}
	ref, _ := name.NewTag("fleetplane/fleet-syncer:test")
	out := filepath.Join(dir, "image.tar")
	if err := build(bin, image{binary: "fleet-syncer", ports: []string{"8090/tcp"}}, ref, out); err != nil {
		t.Fatal(err)
	}
	img, err := tarball.ImageFromPath(out, &ref)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Config.Entrypoint; len(got) != 1 || got[0] != "/fleet-syncer" {
		t.Errorf("entrypoint %v", got)
	}
	if cfg.Config.User != nonRoot || cfg.OS != "linux" {
		t.Errorf("user %q os %q", cfg.Config.User, cfg.OS)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers %d, %v", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	h, err := tar.NewReader(rc).Next()
	if err != nil {
		t.Fatal(err)
	}
	if h.Name != "fleet-syncer" || h.Mode != 0o755 {
		t.Errorf("layer holds %s mode %o", h.Name, h.Mode)
	}
	_, _ = io.Copy(io.Discard, rc)
}
