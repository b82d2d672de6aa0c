// Package crds embeds the CustomResourceDefinitions generated from apis/ by
// controller-gen. The hub serves them as APIResourceSchemas (see
// config/schemagen); the syncer installs AppliedWork on its member cluster.
package crds

import (
	"embed"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

//go:embed *.yaml
var fs embed.FS

// AppliedWork returns the CRD the syncer installs on its member cluster.
func AppliedWork() (*apiextensionsv1.CustomResourceDefinition, error) {
	return load("placement.kubernetes-fleet.io_appliedworks.yaml")
}

func load(file string) (*apiextensionsv1.CustomResourceDefinition, error) {
	raw, err := fs.ReadFile(file)
	if err != nil {
		return nil, err
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(raw, crd); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return crd, nil
}
