package heureka

import (
	"strconv"
	"strings"
)

// Application is one application's instances, as Eureka groups them.
type Application struct {
	Name      string
	Instances []*Instance
}

// Applications is a registry listing: the full registry, a delta or a VIP
// query. VersionDelta and HashCode are Eureka's versions__delta and
// apps__hashcode.
type Applications struct {
	VersionDelta int64
	HashCode     string
	Apps         []*Application
}

// StatusCounts counts instances by status.
type StatusCounts map[Status]int

// HashCode renders counts as Eureka's reconcile hash code: STATUS_count_
// pairs in ascending status-name order, zero counts left out, e.g.
// "DOWN_1_UP_3_". An empty registry gives "".
func (c StatusCounts) HashCode() string {
	var b strings.Builder
	for _, st := range Statuses {
		if n := c[st]; n > 0 {
			b.WriteString(string(st))
			b.WriteByte('_')
			b.WriteString(strconv.Itoa(n))
			b.WriteByte('_')
		}
	}
	return b.String()
}

// ReconcileHashCode computes apps__hashcode over every instance in apps.
func ReconcileHashCode(apps []*Application) string {
	c := StatusCounts{}
	for _, a := range apps {
		for _, in := range a.Instances {
			c[in.Status]++
		}
	}
	return c.HashCode()
}
