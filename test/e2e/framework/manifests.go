package framework

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// Manifest is one test-data file: its objects and what admission should say.
type Manifest struct {
	Path string
	// Valid is false when the header says `# expect: invalid: <why>`.
	Valid bool
	// Why explains an expected rejection.
	Why string
	// NeedsNamespace is set by `# namespace: supplied by test`.
	NeedsNamespace bool
	Objects        []*unstructured.Unstructured
}

// LoadManifests reads every *.yaml below dir.
func LoadManifests(dir string) ([]Manifest, error) {
	var out []Manifest
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") {
			return err
		}
		m, err := LoadManifest(path)
		if err != nil {
			return err
		}
		out = append(out, m)
		return nil
	})
	return out, err
}

// LoadManifest parses one multi-document YAML file and its header comments.
func LoadManifest(path string) (Manifest, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return Manifest{}, err
	}
	m := Manifest{Path: path, Valid: true}
	for _, line := range strings.Split(string(raw), "\n") {
		switch {
		case strings.HasPrefix(line, "# expect: invalid"):
			m.Valid = false
			m.Why = strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(line, "# expect: invalid"), ":"))
		case strings.HasPrefix(line, "# namespace: supplied by test"):
			m.NeedsNamespace = true
		}
	}
	m.Objects, err = ParseObjects(raw)
	return m, err
}

// ParseObjects decodes all YAML documents in raw, skipping empty ones.
func ParseObjects(raw []byte) ([]*unstructured.Unstructured, error) {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(raw)))
	var objs []*unstructured.Unstructured
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, err
		}
		obj := map[string]any{}
		if err := yaml.Unmarshal(doc, &obj); err != nil {
			return nil, err
		}
		if len(obj) == 0 {
			continue
		}
		objs = append(objs, &unstructured.Unstructured{Object: obj})
	}
}
