package cluster

import (
	"context"

	"lidi/engine/visit"
)

// RobotWork runs each lease on r, the robot a local crawl uses (built on
// the slave from the master's settings), and batches its results per
// lease. The robot never resolves a name: the lease carries the address.
// halt, when not nil, becomes the robot's Halt (SlaveOptions.NewWork's).
func RobotWork(r *visit.Robot, halt func() bool) Work {
	if halt != nil {
		r.Halt = halt
	}
	return func(ctx context.Context, payload []byte) (Outcome, error) {
		l, err := DecodeLease(payload)
		if err != nil {
			return Outcome{}, err
		}
		var rs []visit.Result
		r.Run(ctx, l, func(res visit.Result) { rs = append(rs, res) })
		out := Outcome{Site: l.Key}
		for _, res := range rs {
			if res.Page != nil {
				out.Pages++
			}
			if res.End != nil {
				out.Failed = res.End.Failed
			}
		}
		out.Parts, err = EncodeResults(rs)
		return out, err
	}
}
