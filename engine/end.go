package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// EndReason says why a crawl ended. The zero value, EndNone, means it has
// not ended.
type EndReason string

const (
	EndNone          EndReason = ""
	EndFrontierEmpty EndReason = "frontier-empty" // nothing left to fetch
	EndMaxPages      EndReason = "max-pages"      // limits.max_pages reached
	EndMaxDuration   EndReason = "max-duration"   // limits.max_duration reached
	EndSignal        EndReason = "signal"         // SIGINT or SIGTERM
	EndKey           EndReason = "key"            // the console's q
	EndStopped       EndReason = "stopped"        // the caller's context ended, for a reason it did not name
	EndSeedsFailed   EndReason = "seeds-failed"   // no seed could be fetched (SeedsFailedError)
	EndStoreFailed   EndReason = "store-failed"   // writing to the store failed
)

// StopCause is the cause a caller gives when it ends a crawl's context
// (context.WithCancelCause, context.WithTimeoutCause), so the crawl can say
// why it stopped.
type StopCause struct {
	Reason EndReason
	Detail string // "SIGTERM", "10m0s", …; may be empty
}

// Stopped returns a StopCause.
func Stopped(reason EndReason, detail string) error {
	return &StopCause{Reason: reason, Detail: detail}
}

func (s *StopCause) Error() string {
	if s.Detail == "" {
		return "engine: stopped: " + string(s.Reason)
	}
	return fmt.Sprintf("engine: stopped: %s (%s)", s.Reason, s.Detail)
}

// stopReason reads why ctx ended.
func stopReason(ctx context.Context) (EndReason, string) {
	cause := context.Cause(ctx)
	var sc *StopCause
	switch {
	case errors.As(cause, &sc):
		return sc.Reason, sc.Detail
	case cause == nil, errors.Is(cause, context.Canceled):
		return EndStopped, ""
	}
	return EndStopped, cause.Error()
}

// endText says an end reason in words, for the console, the headless output
// and the events table.
func endText(r EndReason, detail string) string {
	var s string
	switch r {
	case EndFrontierEmpty:
		s = "frontier empty: nothing left to fetch"
	case EndMaxPages:
		s = "limits.max_pages reached"
	case EndMaxDuration:
		s = "limits.max_duration reached"
	case EndSignal:
		s = "stopped by a signal"
	case EndKey:
		s = "stopped from the console"
	case EndSeedsFailed:
		s = "every seed failed"
	case EndStoreFailed:
		s = "writing to the store failed"
	default:
		s = "stopped"
	}
	if detail != "" {
		s += " (" + detail + ")"
	}
	return s
}

// SeedsFailedError ends a crawl that fetched nothing because every seed
// failed: its host did not resolve, its server did not answer, its
// robots.txt was unreachable, or the seed was not a URL in scope.
type SeedsFailedError struct {
	Reasons []string // one per seed site
}

func (e *SeedsFailedError) Error() string {
	return "engine: every seed failed: " + strings.Join(e.Reasons, "; ")
}
