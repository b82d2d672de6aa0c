package clusteraffinity

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"

	"github.com/fleetplane/fleetplane/controllers/common/quantities"
)

// capacity picks one of the resource usage lists of a cluster.
type capacity int

const (
	notAResource capacity = iota
	totalCapacity
	allocatableCapacity
	availableCapacity
)

var capacities = map[string]capacity{
	clusterv1beta1.TotalCapacityName:       totalCapacity,
	clusterv1beta1.AllocatableCapacityName: allocatableCapacity,
	clusterv1beta1.AvailableCapacityName:   availableCapacity,
}

// property is a property name resolved once per cycle, so that reading it
// from a cluster is a map lookup.
type property struct {
	name     string
	capacity capacity
	resource corev1.ResourceName
}

// parseProperty resolves a property name: resources.kubernetes-fleet.io/
// {total,allocatable,available}-<resource> reads status.resourceUsage
// (total is the capacity), any other name reads status.properties.
func parseProperty(name string) (property, error) {
	rest, ok := strings.CutPrefix(name, clusterv1beta1.ResourcePropertyNamePrefix)
	if !ok {
		return property{name: name}, nil
	}
	kind, res, ok := strings.Cut(rest, "-")
	if !ok || res == "" || capacities[kind] == notAResource {
		return property{}, fmt.Errorf("resource property %q is not of the form %s[total|allocatable|available]-[resource]", name, clusterv1beta1.ResourcePropertyNamePrefix)
	}
	return property{name: name, capacity: capacities[kind], resource: corev1.ResourceName(res)}, nil
}

// valueOf returns the property's value on the cluster; a property that is
// missing or not a quantity counts as absent.
func (p property) valueOf(mc *clusterv1beta1.MemberCluster) (resource.Quantity, bool) {
	usage := &mc.Status.ResourceUsage
	var list corev1.ResourceList
	switch p.capacity {
	case totalCapacity:
		list = usage.Capacity
	case allocatableCapacity:
		list = usage.Allocatable
	case availableCapacity:
		list = usage.Available
	default:
		v, ok := mc.Status.Properties[clusterv1beta1.PropertyName(p.name)]
		if !ok {
			return resource.Quantity{}, false
		}
		q, err := quantities.Parse(v.Value)
		return q, err == nil
	}
	q, ok := list[p.resource]
	return q, ok
}

// requirement is a parsed property selector requirement.
type requirement struct {
	property
	op    placementv1beta1.PropertySelectorOperator
	value resource.Quantity
}

func parseRequirement(r placementv1beta1.PropertySelectorRequirement) (requirement, error) {
	p, err := parseProperty(r.Name)
	if err != nil {
		return requirement{}, err
	}
	if len(r.Values) != 1 {
		return requirement{}, fmt.Errorf("property selector on %q needs exactly one value, got %d", r.Name, len(r.Values))
	}
	v, err := quantities.Parse(r.Values[0])
	if err != nil {
		return requirement{}, fmt.Errorf("property selector on %q: value %q is not a quantity: %w", r.Name, r.Values[0], err)
	}
	switch r.Operator {
	case placementv1beta1.PropertySelectorGreaterThan, placementv1beta1.PropertySelectorGreaterThanOrEqualTo,
		placementv1beta1.PropertySelectorEqualTo, placementv1beta1.PropertySelectorNotEqualTo,
		placementv1beta1.PropertySelectorLessThan, placementv1beta1.PropertySelectorLessThanOrEqualTo:
	default:
		return requirement{}, fmt.Errorf("property selector on %q has unknown operator %q", r.Name, r.Operator)
	}
	return requirement{property: p, op: r.Operator, value: v}, nil
}

// matches reports whether the cluster has the property and it compares as
// required; a missing property fails.
func (r *requirement) matches(mc *clusterv1beta1.MemberCluster) bool {
	q, ok := r.valueOf(mc)
	if !ok {
		return false
	}
	c := q.Cmp(r.value)
	switch r.op {
	case placementv1beta1.PropertySelectorGreaterThan:
		return c > 0
	case placementv1beta1.PropertySelectorGreaterThanOrEqualTo:
		return c >= 0
	case placementv1beta1.PropertySelectorEqualTo:
		return c == 0
	case placementv1beta1.PropertySelectorNotEqualTo:
		return c != 0
	case placementv1beta1.PropertySelectorLessThan:
		return c < 0
	default:
		return c <= 0
	}
}
