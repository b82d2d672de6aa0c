// Package envelopes opens the envelopes a placement selects: a
// ClusterResourceEnvelope or a ResourceEnvelope carries objects that must
// take effect on member clusters only. The hub stores the envelope; its
// objects exist nowhere on the hub and reach the members in a Work of their
// own. A ConfigMap annotated kubernetes-fleet.io/envelope-configmap=true,
// KubeFleet's former envelope, is an ordinary ConfigMap, as in KubeFleet.
package envelopes

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/internal/manifests"
	"github.com/fleetplane/fleetplane/internal/teampolicy"
)

// Envelope is an opened envelope.
type Envelope struct {
	ID placementv1beta1.EnvelopeIdentifier
	// Objects are the carried objects as JSON, in key order; Keys are
	// their keys in the envelope's data.
	Objects [][]byte
	Keys    []string
}

// Entry names the envelope and the key of its i-th object, for messages.
func (e *Envelope) Entry(i int) string {
	return fmt.Sprintf("%s, entry %q", describe(e.ID), e.Keys[i])
}

// Open returns the envelope a selected resource is, nil if it is none, or
// an error naming the envelope and the entry that cannot be placed.
func Open(raw []byte) (*Envelope, error) {
	// Called for every selected resource on every Work sync: telling that a
	// resource is no envelope must not cost decoding it.
	if !bytes.Contains(raw, []byte("Envelope")) {
		return nil, nil
	}
	h, err := manifests.ReadHead(raw)
	if err != nil {
		return nil, err
	}
	gv, err := schema.ParseGroupVersion(h.APIVersion)
	if err != nil {
		return nil, err
	}
	if gv.Group != placementv1beta1.GroupVersion.Group || (h.Kind != string(placementv1beta1.ClusterResourceEnvelopeType) && h.Kind != string(placementv1beta1.ResourceEnvelopeType)) {
		return nil, nil
	}
	id := placementv1beta1.EnvelopeIdentifier{Name: h.Name, Namespace: h.Namespace, Type: placementv1beta1.EnvelopeType(h.Kind)}
	var body struct {
		Data map[string]json.RawMessage `json:"data"`
	}
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(raw, &body); err != nil {
		return nil, fmt.Errorf("%s: %w", describe(id), err)
	}
	entries := make(map[string][]byte, len(body.Data))
	for k, v := range body.Data {
		entries[k] = v
	}
	return open(id, entries)
}

func open(id placementv1beta1.EnvelopeIdentifier, entries map[string][]byte) (*Envelope, error) {
	keys := make([]string, 0, len(entries))
	for k := range entries {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	env := &Envelope{ID: id}
	for _, k := range keys {
		obj, err := entry(id, entries[k])
		if err != nil {
			return nil, fmt.Errorf("%s, entry %q: %w", describe(id), k, err)
		}
		env.Objects = append(env.Objects, obj)
		env.Keys = append(env.Keys, k)
	}
	if len(env.Objects) == 0 {
		return nil, fmt.Errorf("%s carries no object: add at least one entry to its data", describe(id))
	}
	return env, nil
}

// entry checks one carried object and returns it as JSON. A
// ClusterResourceEnvelope carries cluster-scoped objects; a ResourceEnvelope
// carries objects of its own namespace (one without a namespace gets it).
func entry(id placementv1beta1.EnvelopeIdentifier, raw []byte) ([]byte, error) {
	js, err := yaml.YAMLToJSON(raw)
	if err != nil {
		return nil, fmt.Errorf("not a YAML or JSON object: %v", err)
	}
	var obj map[string]any
	if err := json.Unmarshal(js, &obj); err != nil || obj == nil {
		return nil, fmt.Errorf("not a single Kubernetes object: each entry holds one object with apiVersion, kind and metadata.name")
	}
	// Read with the exact key names the member will see (encoding/json
	// would match "metAdAtA" to a struct's metadata field), and refused if
	// a key repeats or has a variant in another letter case.
	if _, err := manifests.ReadHead(js); err != nil {
		return nil, err
	}
	u := unstructured.Unstructured{Object: obj}
	if _, ok := obj["metadata"].(map[string]any); !ok {
		return nil, fmt.Errorf("apiVersion, kind and metadata.name are required")
	}
	kind, name, namespace := u.GetKind(), u.GetName(), u.GetNamespace()
	switch {
	case u.GetAPIVersion() == "" || kind == "" || (name == "" && u.GetGenerateName() == ""):
		// An object with generateName alone goes on to the members, whose
		// syncers report it FoundGenerateName and place the rest, as in
		// KubeFleet.
		return nil, fmt.Errorf("apiVersion, kind and metadata.name are required")
	case kind == string(placementv1beta1.ClusterResourceEnvelopeType) || kind == string(placementv1beta1.ResourceEnvelopeType):
		return nil, fmt.Errorf("envelopes cannot carry envelopes")
	case id.Type == placementv1beta1.ResourceEnvelopeType && teampolicy.BuiltinClusterScoped(u.GroupVersionKind().GroupKind()):
		return nil, fmt.Errorf("%s %s is cluster-scoped: a ResourceEnvelope carries namespaced objects only; put it in a ClusterResourceEnvelope", kind, name)
	case id.Type == placementv1beta1.ClusterResourceEnvelopeType && namespace != "":
		return nil, fmt.Errorf("%s %s is namespaced (namespace %s): a ClusterResourceEnvelope carries cluster-scoped objects only; put it in a ResourceEnvelope in namespace %s",
			kind, name, namespace, namespace)
	case id.Type != placementv1beta1.ClusterResourceEnvelopeType && namespace != "" && namespace != id.Namespace:
		return nil, fmt.Errorf("%s %s is in namespace %s: an envelope in namespace %s carries objects of its own namespace only", kind, name, namespace, id.Namespace)
	}
	if id.Type != placementv1beta1.ClusterResourceEnvelopeType && namespace == "" {
		u.SetNamespace(id.Namespace)
		return json.Marshal(obj)
	}
	return js, nil
}

func describe(id placementv1beta1.EnvelopeIdentifier) string {
	if id.Namespace != "" {
		return fmt.Sprintf("%s %s/%s", id.Type, id.Namespace, id.Name)
	}
	return fmt.Sprintf("%s %s", id.Type, id.Name)
}
