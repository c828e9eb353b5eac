package cluster

import (
	"context"

	"lidi/engine/visit"
)

// RobotWork runs each lease on r, the robot a local crawl uses (built on
// the slave from the master's settings), and sends each page's result as
// soon as it is fetched (emit), the lease's end last: a slave that dies in
// the middle of a lease costs the master only its page in flight. The
// robot never resolves a name: the lease carries the address. halt, when
// not nil, becomes the robot's Halt (SlaveOptions.NewWork's).
func RobotWork(r *visit.Robot, halt func() bool) Work {
	if halt != nil {
		r.Halt = halt
	}
	return func(ctx context.Context, payload []byte, emit func([]byte) error) (Outcome, error) {
		l, err := DecodeLease(payload)
		if err != nil {
			return Outcome{}, err
		}
		var rest []visit.Result // what could not be emitted, and the end
		out := Outcome{Site: l.Key}
		r.Run(ctx, l, func(res visit.Result) {
			if res.Page != nil {
				out.Pages++
			}
			if res.End != nil {
				out.Failed = res.End.Failed
			}
			if res.End != nil || len(rest) > 0 {
				rest = append(rest, res)
				return
			}
			part, err := EncodeResults([]visit.Result{res})
			if err == nil {
				err = emit(part[0])
			}
			if err != nil {
				// Kept for the end (the spool failed): the
				// results stay in order.
				rest = append(rest, res)
			}
		})
		out.Parts, err = EncodeResults(rest)
		return out, err
	}
}
