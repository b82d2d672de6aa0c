// Command images builds the OCI images of the hub and the syncer from
// static binaries, without a container daemon: each image is one layer
// holding the binary on an empty base, written as a tarball that
// `docker load`, `podman load`, `ctr import` and `crane push` read.
//
//	go run ./build/images --bin-dir bin --tag v0.1.0
package main

import (
	"archive/tar"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// nonRoot is the user the images run as (the distroless "nonroot" uid).
const nonRoot = "65532:65532"

// image is one image to build.
type image struct {
	binary string
	// ports the process listens on, for the image config.
	ports []string
}

var images = []image{
	{binary: "fleet-syncer", ports: []string{"8090/tcp"}},
	{binary: "fleet-hub", ports: []string{"6443/tcp"}},
}

func main() {
	binDir := flag.String("bin-dir", "bin", "directory with the static linux binaries, where the tarballs are written")
	repo := flag.String("repository", "fleetplane", "image repository prefix")
	tag := flag.String("tag", "latest", "image tag")
	flag.Parse()
	for _, img := range images {
		ref, err := name.NewTag(fmt.Sprintf("%s/%s:%s", *repo, img.binary, *tag))
		if err != nil {
			fail(err)
		}
		out := filepath.Join(*binDir, img.binary+"-image.tar")
		if err := build(filepath.Join(*binDir, "linux", img.binary), img, ref, out); err != nil {
			fail(err)
		}
		fmt.Printf("%s -> %s\n", ref, out)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "images:", err)
	os.Exit(1)
}

// build writes the image of one binary as a tarball tagged ref.
func build(binary string, img image, ref name.Tag, out string) error {
	layer, err := binaryLayer(binary, "/"+img.binary)
	if err != nil {
		return err
	}
	withLayer, err := mutate.Append(empty.Image, mutate.Addendum{Layer: layer, History: v1.History{CreatedBy: "build/images: " + img.binary, Created: v1.Time{Time: time.Unix(0, 0)}}})
	if err != nil {
		return err
	}
	cfg, err := withLayer.ConfigFile()
	if err != nil {
		return err
	}
	cfg = cfg.DeepCopy()
	cfg.Architecture, cfg.OS = "amd64", "linux"
	cfg.Config.Entrypoint = []string{"/" + img.binary}
	cfg.Config.User = nonRoot
	cfg.Config.Env = []string{"PATH=/"}
	cfg.Config.ExposedPorts = map[string]struct{}{}
	for _, p := range img.ports {
		cfg.Config.ExposedPorts[p] = struct{}{}
	}
	final, err := mutate.ConfigFile(withLayer, cfg)
	if err != nil {
		return err
	}
	return tarball.WriteToFile(out, ref, final)
}

// binaryLayer is a layer with one executable file at path, owned by the
// non-root user, with a fixed time so that builds are reproducible.
func binaryLayer(binary, path string) (v1.Layer, error) {
	content, err := os.ReadFile(binary)
	if err != nil {
		return nil, fmt.Errorf("reading %s (build it with make images): %w", binary, err)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := tw.WriteHeader(&tar.Header{Name: path[1:], Mode: 0o755, Size: int64(len(content)), Uid: 65532, Gid: 65532,
		ModTime: time.Unix(0, 0), Typeflag: tar.TypeReg}); err != nil {
		return nil, err
	}
	if _, err := tw.Write(content); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	raw := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(raw)), nil })
}
