// Command schemagen turns the controller-gen CRDs of the fleet APIs and the
// OpenAPI definitions of the standard workload APIs into kcp APIResourceSchemas
// and APIExports. `make generate` runs it; its output is committed.
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/kcp-dev/kcp/pkg/virtual/framework/internalapis"
	apisv1alpha1 "github.com/kcp-dev/kcp/sdk/apis/apis/v1alpha1"
	apisv1alpha2 "github.com/kcp-dev/kcp/sdk/apis/apis/v1alpha2"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/kube-openapi/pkg/common"
	generatedopenapi "k8s.io/kubernetes/pkg/generated/openapi"
	"sigs.k8s.io/yaml"

	fleetconfig "github.com/fleetplane/fleetplane/config/fleet"
)

func main() {
	crdDir := flag.String("crds", "config/crds", "directory of controller-gen CRDs")
	outDir := flag.String("out", "config/fleet", "directory for APIResourceSchemas and APIExports")
	flag.Parse()
	if err := run(*crdDir, *outDir); err != nil {
		fmt.Fprintln(os.Stderr, "schemagen:", err)
		os.Exit(1)
	}
}

func run(crdDir, outDir string) error {
	fleetSchemas, err := fleetSchemas(crdDir)
	if err != nil {
		return err
	}
	workloadSchemas, err := workloadSchemas()
	if err != nil {
		return err
	}
	byExport := map[string][]*apisv1alpha1.APIResourceSchema{
		fleetconfig.WorkloadsExport: workloadSchemas,
	}
	for _, s := range fleetSchemas {
		byExport[s.Spec.Group] = append(byExport[s.Spec.Group], s)
	}
	for _, name := range fleetconfig.Exports {
		schemas := byExport[name]
		if len(schemas) == 0 {
			return fmt.Errorf("no schemas for export %s", name)
		}
		sort.Slice(schemas, func(i, j int) bool { return schemas[i].Name < schemas[j].Name })
		if err := writeYAML(filepath.Join(outDir, "apiresourceschemas-"+name+".yaml"), toObjects(schemas)...); err != nil {
			return err
		}
		if err := writeYAML(filepath.Join(outDir, "apiexport-"+name+".yaml"), apiExport(name, schemas)); err != nil {
			return err
		}
	}
	return nil
}

// fleetSchemas reads the CRDs and adds the extra served versions: v1beta1 is
// stored, and v1 (and v1alpha1 for some kinds) serve the same schema so that
// KubeFleet manifests in any of these versions apply unchanged.
func fleetSchemas(crdDir string) ([]*apisv1alpha1.APIResourceSchema, error) {
	files, err := filepath.Glob(filepath.Join(crdDir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	var out []*apisv1alpha1.APIResourceSchema
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(raw, crd); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		if err := addServedVersions(crd); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		prefix, err := schemaPrefix(crd.Spec)
		if err != nil {
			return nil, err
		}
		s, err := apisv1alpha1.CRDToAPIResourceSchema(crd, prefix)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		out = append(out, s)
	}
	return out, nil
}

func addServedVersions(crd *apiextensionsv1.CustomResourceDefinition) error {
	extra := extraServedVersions[crd.Spec.Names.Kind]
	if len(extra) == 0 {
		return nil
	}
	if len(crd.Spec.Versions) != 1 || crd.Spec.Versions[0].Name != "v1beta1" {
		return fmt.Errorf("expected exactly the storage version v1beta1 for %s", crd.Name)
	}
	stored := crd.Spec.Versions[0]
	for _, v := range extra {
		served := *stored.DeepCopy()
		served.Name = v
		served.Storage = false
		crd.Spec.Versions = append(crd.Spec.Versions, served)
	}
	// Same schema in every version: the API server only relabels apiVersion.
	crd.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter}
	return nil
}

// workloadSchemas builds schemas for the standard workload kinds from the
// Kubernetes OpenAPI definitions compiled into the hub.
func workloadSchemas() ([]*apisv1alpha1.APIResourceSchema, error) {
	schemes := []*runtime.Scheme{clientgoscheme.Scheme}
	getters := []common.GetOpenAPIDefinitions{generatedopenapi.GetOpenAPIDefinitions}
	apis, err := internalapis.CreateAPIResourceSchemas(schemes, getters, workloadAPIs...)
	if err != nil {
		return nil, err
	}
	out := make([]*apisv1alpha1.APIResourceSchema, 0, len(apis))
	for _, s := range apis {
		if err := decorateWorkloadSchema(s); err != nil {
			return nil, err
		}
		prefix, err := schemaPrefix(s.Spec)
		if err != nil {
			return nil, err
		}
		group := s.Spec.Group
		if group == "" {
			group = "core"
		}
		s.Name = prefix + "." + s.Spec.Names.Plural + "." + group
		out = append(out, s)
	}
	return out, nil
}

// schemaPrefix derives the version prefix of a schema name from its content:
// APIResourceSchemas are immutable, so a changed schema needs a new name.
func schemaPrefix(spec any) (string, error) {
	raw, err := json.Marshal(spec)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(raw)
	return "v" + hex.EncodeToString(sum[:])[:10], nil
}

// limitedExports are the exports whose consumers are held to the maximal
// permission policy in config/fleet (clusterrole-maximal-permissions.yaml):
// they hold objects only the hub's controllers may write.
var limitedExports = map[string]bool{fleetconfig.PlacementExport: true, fleetconfig.ClusterExport: true, fleetconfig.ClusterInventoryExport: true}

func apiExport(name string, schemas []*apisv1alpha1.APIResourceSchema) *apisv1alpha2.APIExport {
	e := &apisv1alpha2.APIExport{
		TypeMeta:   metav1.TypeMeta{APIVersion: apisv1alpha2.SchemeGroupVersion.String(), Kind: "APIExport"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
	}
	if limitedExports[name] {
		e.Spec.MaximalPermissionPolicy = &apisv1alpha2.MaximalPermissionPolicy{Local: &apisv1alpha2.LocalAPIExportPolicy{}}
	}
	for _, s := range schemas {
		e.Spec.Resources = append(e.Spec.Resources, apisv1alpha2.ResourceSchema{
			Name:    s.Spec.Names.Plural,
			Group:   s.Spec.Group,
			Schema:  s.Name,
			Storage: apisv1alpha2.ResourceSchemaStorage{CRD: &apisv1alpha2.ResourceSchemaStorageCRD{}},
		})
	}
	return e
}

func toObjects(schemas []*apisv1alpha1.APIResourceSchema) []any {
	out := make([]any, 0, len(schemas))
	for _, s := range schemas {
		s.TypeMeta = metav1.TypeMeta{APIVersion: apisv1alpha1.SchemeGroupVersion.String(), Kind: "APIResourceSchema"}
		out = append(out, s)
	}
	return out
}

func writeYAML(path string, objs ...any) error {
	var buf bytes.Buffer
	buf.WriteString("# Code generated by config/schemagen. DO NOT EDIT.\n")
	for i, o := range objs {
		raw, err := yaml.Marshal(o)
		if err != nil {
			return err
		}
		if i > 0 {
			// The header comment belongs to the first document: a document
			// holding only a comment would decode as an empty object.
			buf.WriteString("---\n")
		}
		buf.Write(bytes.ReplaceAll(raw, []byte("  creationTimestamp: null\n"), nil))
	}
	out := strings.ReplaceAll(buf.String(), "\nstatus: {}\n", "\n")
	return os.WriteFile(path, []byte(out), 0o644)
}
