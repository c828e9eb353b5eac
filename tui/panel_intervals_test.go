package tui

import (
	"testing"
	"time"

	"lidi/engine"
)

func TestIntervalsPanelWarmupThenGroups(t *testing.T) {
	s := crawlSeries(1, engine.StateRunning)
	warm := measured(s[0])
	warm.Intervals = nil
	r := *warm.Recrawl
	r.WarmupEnds, r.Freshness, r.FreshnessExact, r.History = r.Now.Add(90*time.Minute), 0.5, false, nil
	warm.Recrawl = &r
	c := newFake([]engine.Stats{warm})
	hs := newHarness(t, c, 120, 40)
	mustShow(t, hs, "warming up", "200 channels probed", "~50.0% fresh (estimated)", "grouped by change rate in 1.5h")

	c.series = []engine.Stats{measured(s[0])}
	c.next = 0
	hs.refresh(1)
	mustNotShow(t, hs, "warming up")
	for hs.m.focus != intervalsPanelID {
		hs.press("tab")
	}
	hs.press("enter")
	mustShow(t, hs, "82.3% fresh (ground truth)", "25m since iir's reassignment #3", "380 recrawls", "12 dropped", "interval over time", "90%")
}

func TestIntervalsPanelSaysWhyRobotsIdle(t *testing.T) {
	s := crawlSeries(1, engine.StateRunning)
	for _, tc := range []struct {
		name           string
		busy           int
		queued         int64
		ready, waiting int
		want, wantNot  string
	}{
		{"nothing queued", 0, 0, 0, 0, "robots idle: every channel is recrawled as often as its interval wants", ""},
		{"politeness", 1, 40, 0, 3, "robots idle: the 3 sites with queued pages wait for their politeness delay", ""},
		{"busy", 0, 40, 2, 1, "", "robots idle"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := measured(s[0])
			st.RobotsBusy, st.QueueDepth, st.SitesReady, st.SitesWaiting = tc.busy, tc.queued, tc.ready, tc.waiting
			if tc.name == "busy" {
				st.RobotsBusy = st.Robots
			}
			c := newFake([]engine.Stats{st})
			hs := newHarness(t, c, 120, 40)
			for hs.m.focus != intervalsPanelID {
				hs.press("tab")
			}
			hs.press("enter")
			if tc.want != "" {
				mustShow(t, hs, tc.want)
			}
			if tc.wantNot != "" {
				mustNotShow(t, hs, tc.wantNot)
			}
		})
	}
}

// The policy pages has no tasks nor reassignments: the panel shows its
// plan (recrawls an hour), its channels still warming up, and per group
// the change interval, visit interval and freshness its pages' estimates
// give, without updates or success rates; robots idle with nothing queued
// are so because every page is recrawled as its plan wants.
func TestIntervalsPanelPagesPolicy(t *testing.T) {
	s := crawlSeries(1, engine.StateRunning)
	st := measured(s[0])
	for i := range st.Intervals {
		g := &st.Intervals[i]
		g.Submitted, g.Updates, g.SuccessRate, g.Initial = 0, 0, 0, 0
	}
	r := *st.Recrawl
	r.Policy, r.PerPage, r.Budget, r.Warming, r.Done, r.Reassignments, r.LastReassign = "pages", true, 1234.4, 7, 5210, 0, time.Time{}
	st.Recrawl = &r
	st.RobotsBusy, st.QueueDepth = 0, 0
	c := newFake([]engine.Stats{st})
	hs := newHarness(t, c, 120, 40)
	for hs.m.focus != intervalsPanelID {
		hs.press("tab")
	}
	hs.press("enter")
	mustShow(t, hs, "1,234 recrawls/h planned", "7 warming up", "5,210 recrawls", "change", "every", "fresh",
		"50m", "45m", "71%", "5h", "6h", "55%", "interval over time",
		"robots idle: every page is recrawled as often as its plan wants")
	mustNotShow(t, hs, "reassignment", "succ", "upd", "dropped")

	// Before any channel's evidence sufficed.
	warm := st
	warm.Intervals = nil
	c.series = []engine.Stats{warm}
	c.next = 0
	hs.refresh(1)
	mustShow(t, hs, "warming up", "200 channels probed", "each channel grouped by change rate once its evidence suffices")
	mustNotShow(t, hs, "grouped by change rate in")
}
