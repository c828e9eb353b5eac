package frontier_test

import (
	"fmt"

	"lidi/engine/frontier"
)

func ExampleNewStrategy() {
	s, err := frontier.NewStrategy("batch", frontier.StrategyOptions{K: 500})
	fmt.Println(s.Name(), s.(*frontier.Batch).K(), err)
	_, err = frontier.NewStrategy("optimal", frontier.StrategyOptions{})
	fmt.Println(err)
	// Output:
	// batch 500 <nil>
	// frontier: the strategy orders pages by their true PageRank and needs an oracle that knows it; none was given
}
