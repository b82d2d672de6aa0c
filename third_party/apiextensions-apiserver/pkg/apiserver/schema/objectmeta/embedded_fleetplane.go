package objectmeta

import (
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
)

// EmbeddedResources returns the part of s that leads to embedded resources
// (x-kubernetes-embedded-resource), or nil if s has none.
//
// Fleetplane: coercion acts on embedded resources only (their apiVersion,
// kind and metadata), yet walks every field of an object its schema knows;
// the API server coerces every custom resource it decodes, from a request
// or from etcd, once per watcher. Coercing with the part returned here does
// the same, walking only the fields that can hold an embedded resource —
// for an API without any, nothing.
func EmbeddedResources(s *structuralschema.Structural) *structuralschema.Structural {
	if s == nil {
		return nil
	}
	out := &structuralschema.Structural{Extensions: structuralschema.Extensions{XEmbeddedResource: s.XEmbeddedResource}}
	keep := s.XEmbeddedResource
	for k, p := range s.Properties {
		if e := EmbeddedResources(&p); e != nil {
			if out.Properties == nil {
				out.Properties = map[string]structuralschema.Structural{}
			}
			out.Properties[k] = *e
			keep = true
		}
	}
	if s.AdditionalProperties != nil {
		if e := EmbeddedResources(s.AdditionalProperties.Structural); e != nil {
			out.AdditionalProperties = &structuralschema.StructuralOrBool{Structural: e, Bool: true}
			keep = true
			// A field with a property of its own is never coerced as an
			// additional one: it keeps a schema that does nothing.
			for k := range s.Properties {
				if _, ok := out.Properties[k]; !ok {
					if out.Properties == nil {
						out.Properties = map[string]structuralschema.Structural{}
					}
					out.Properties[k] = structuralschema.Structural{}
				}
			}
		}
	}
	if e := EmbeddedResources(s.Items); e != nil {
		out.Items = e
		keep = true
	}
	if !keep {
		return nil
	}
	return out
}
