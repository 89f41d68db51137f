package monitor

import (
	"context"
	"fmt"
)

// NodesSource adds the global status of a target's other nodes (the
// hosts after the first of a URL such as mysql://u@h1,h2,h3/db, over
// which a load spreads its connections: a Galera cluster, replicas behind
// a list) to what StatusSource read on the first, so that the server's
// figures are the sum over every node the load reaches. The statements it
// sends each node are the sampler's own there, as on the first node.
type NodesSource struct {
	nodes []*OwnQuerier
	names []string
}

// NewNodesSource reads the nodes through qs, one connection each, named
// by names in errors.
func NewNodesSource(qs []Querier, names []string) *NodesSource {
	s := &NodesSource{names: names}
	for _, q := range qs {
		s.nodes = append(s.nodes, NewOwnQuerier(q))
	}
	return s
}

// Name is "other nodes".
func (*NodesSource) Name() string { return "other nodes" }

// Read sums the numeric status of every other node into r. A node that
// does not answer fails the read: a sum without it would look like a
// slower server.
func (s *NodesSource) Read(ctx context.Context, _ *OwnQuerier, r *Reading) error {
	for i, q := range s.nodes {
		one := &Reading{Values: map[string]float64{}}
		if err := (StatusSource{}).Read(ctx, q, one); err != nil {
			return fmt.Errorf("node %s: %w", s.names[i], err)
		}
		for k, v := range one.Values {
			r.Values[k] += v
		}
	}
	return nil
}
