package framework

import (
	"fmt"
	"slices"
)

// pickFixed selects the named clusters that exist and pass the filters; a
// named cluster with a current binding keeps it. Every other active binding
// is unscheduled.
func (c *cycle) pickFixed() error {
	names := slices.Clone(c.policy.ClusterNames)
	slices.Sort(names)
	names = slices.Compact(names)
	c.keepNamed(names)
	if err := c.runPreFilter(); err != nil {
		return err
	}
	clusters := c.lookup(names)
	for _, name := range names {
		if c.selected[name] {
			continue
		}
		mc := clusters[name]
		if mc == nil {
			c.reject(name, fmt.Sprintf(notFoundReasonFormat, name), nil)
			continue
		}
		st, err := c.filter(c.filters, mc)
		if err != nil {
			return err
		}
		if st != nil {
			c.reject(name, st.Message(), nil)
			continue
		}
		c.pick(name, ClusterScore{})
	}
	c.unscheduleUnpickedObsolete()
	c.conclude(len(c.selected) == len(names))
	return nil
}

// keepNamed keeps the current bindings of named clusters and unschedules the
// others.
func (c *cycle) keepNamed(names []string) {
	for name, b := range c.current {
		if _, named := slices.BinarySearch(names, name); !named {
			c.unschedule(b)
			delete(c.current, name)
		}
	}
	c.keepCurrent()
}
