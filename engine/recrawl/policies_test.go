package recrawl

import (
	"fmt"
	"math"
	"testing"
	"time"

	clk "lidi/engine/clock"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func TestCheckPriorities(t *testing.T) {
	m := time.Minute
	tests := []struct {
		name     string
		in, want []time.Duration
	}{
		{"in order", []time.Duration{60 * m, 120 * m, 240 * m}, []time.Duration{60 * m, 120 * m, 240 * m}},
		{"a slower group under a faster one becomes σ times it", []time.Duration{100 * m, 80 * m, 240 * m}, []time.Duration{100 * m, 120 * m, 240 * m}},
		{"no more than μ times the previous", []time.Duration{60 * m, 600 * m, 2400 * m}, []time.Duration{60 * m, 240 * m, 960 * m}},
		{"empty groups are skipped", []time.Duration{60 * m, 0, 50 * m}, []time.Duration{60 * m, 0, 72 * m}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := append([]time.Duration(nil), tt.in...)
			CheckPriorities(got, 1.2, 4)
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("got %v, want %v", got, tt.want)
				}
			}
		})
	}
}

// twoGroups returns a manager of two channels changing every 60 minutes and
// two every 240, in two groups, with the policy and a manual clock.
func twoGroups(t *testing.T, p PolicyName, tune func(*Options)) (*Manager, *clk.Fake) {
	t.Helper()
	clock := clk.NewFake(t0)
	opt := Defaults()
	opt.Policy, opt.Groups, opt.Clock = p, 2, clock
	opt.Encourage = 0.9 // the hand computations below use δ = 0.9
	if tune != nil {
		tune(&opt)
	}
	specs := []ChannelSpec{
		{ID: "a", Rate: RateOf(60 * time.Minute)}, {ID: "b", Rate: RateOf(60 * time.Minute)},
		{ID: "c", Rate: RateOf(240 * time.Minute)}, {ID: "d", Rate: RateOf(240 * time.Minute)},
	}
	m, err := New(opt, specs)
	if err != nil {
		t.Fatal(err)
	}
	s := m.Stats()
	if s.Groups[0].Channels != 2 || s.Groups[1].Channels != 2 {
		t.Fatalf("groups %+v, want two channels each", s.Groups)
	}
	return m, clock
}

// submit counts n submissions of channel id, as Due would.
func submit(m *Manager, id ChannelID, n int) {
	m.mu.Lock()
	c := m.byID[id]
	c.SubCount += n
	c.Submitted += n
	m.mu.Unlock()
}

// updated reports a successful recrawl of id finished at t0+at, which took d.
func updated(m *Manager, clock *clk.Fake, id ChannelID, at, d time.Duration, changed bool) {
	clock.Set(t0.Add(at))
	m.Done(Task{Channel: id}, Outcome{Success: true, Changed: changed, Duration: d})
}

func minutes(d time.Duration) float64 { return d.Minutes() }

// TestIIREncouragesAndChecks drives IIR through two reassignments on a
// hand-made history (times in minutes from the start).
//
// Window 1, ending at a's 6th update (540), when 50% of the top group has
// more than 5 updates: a updated every 90 (6 of 8 submissions), b at 100,
// 200, 300 (3 of 4), c at 300 (1 of 2), d never (1 submitted). historyIntervals:
// a 90, b 100, c 300, d 540 (the gap so far). Both success rates rose from
// 0, so the groups get (90+100)/2·δ = 85.5 and (300+540)/2·δ = 378, which
// checkPriorities caps at μ·85.5 = 342.
//
// Window 2, ending at a's next 6th update (1140): a updated every 100 (6 of
// 12), nothing else. a 100, b 840 (since 300), c 840, d 600 (since the
// reassignment). The top group's success rate fell (0.5 < 0.75) and the
// other's is 0: no encouragement: 470 and 720.
func TestIIREncouragesAndChecks(t *testing.T) {
	m, clock := twoGroups(t, IIR, nil)
	if s := m.Stats(); s.Groups[0].Interval != 60*time.Minute || s.Groups[1].Interval != 240*time.Minute {
		t.Fatalf("initial intervals %v and %v, want 60m and 240m", s.Groups[0].Interval, s.Groups[1].Interval)
	}
	submit(m, "a", 8)
	submit(m, "b", 4)
	submit(m, "c", 2)
	submit(m, "d", 1)
	for _, at := range []int{100, 200, 300} {
		updated(m, clock, "b", time.Duration(at)*time.Minute, time.Minute, true)
	}
	updated(m, clock, "c", 300*time.Minute, time.Minute, true)
	for i := 1; i <= 6; i++ {
		if got := m.Stats().Reassignments; got != 0 {
			t.Fatalf("reassigned after %d updates of a", i-1)
		}
		updated(m, clock, "a", time.Duration(90*i)*time.Minute, time.Minute, true)
	}
	s := m.Stats()
	if s.Reassignments != 1 {
		t.Fatalf("%d reassignments after a's 6th update, want 1", s.Reassignments)
	}
	checkGroups(t, s, 85.5, 342)
	r := s.Recent[0]
	if r.Policy != IIR || !r.At.Equal(t0.Add(540*time.Minute)) || math.Abs(r.SuccessRates[0]-0.75) > 1e-9 || math.Abs(r.SuccessRates[1]-1.0/3) > 1e-9 {
		t.Errorf("reassignment %+v", r)
	}
	if s.Groups[0].Updates != 0 || s.Groups[0].Submitted != 0 {
		t.Errorf("the window did not restart: %+v", s.Groups[0])
	}

	submit(m, "a", 12)
	for i := 1; i <= 6; i++ {
		updated(m, clock, "a", time.Duration(540+100*i)*time.Minute, time.Minute, true)
	}
	s = m.Stats()
	if s.Reassignments != 2 {
		t.Fatalf("%d reassignments, want 2", s.Reassignments)
	}
	checkGroups(t, s, 470, 720)
}

func checkGroups(t *testing.T, s Stats, want ...float64) {
	t.Helper()
	for i, w := range want {
		if got := minutes(s.Groups[i].Interval); math.Abs(got-w) > 1e-6 {
			t.Errorf("group %d interval %.4gm, want %.4gm", i, got, w)
		}
	}
}

// TestICRTheta: with every recrawl taking 10 minutes, the initial intervals
// (60 and 240 minutes) would keep 2·10/60 + 2·10/240 = 5/12 robots busy.
// Over the history, to a's 6th update at 540 minutes, a was updated 6
// times, b 5, c and d once: they kept 13·10/540 robots busy, so
// θ = (5/12)/(13/54) and both groups' intervals scale by θ, then by δ
// (their success rates rose from 0).
func TestICRTheta(t *testing.T) {
	m, clock := twoGroups(t, ICR, nil)
	submit(m, "a", 6)
	submit(m, "b", 6)
	submit(m, "c", 1)
	submit(m, "d", 1)
	updated(m, clock, "c", 300*time.Minute, 10*time.Minute, true)
	updated(m, clock, "d", 540*time.Minute, 10*time.Minute, true)
	for i := 1; i <= 5; i++ {
		updated(m, clock, "b", time.Duration(90*i)*time.Minute, 10*time.Minute, true)
	}
	for i := 1; i <= 6; i++ {
		updated(m, clock, "a", time.Duration(90*i)*time.Minute, 10*time.Minute, true)
	}
	s := m.Stats()
	if s.Reassignments != 1 {
		t.Fatalf("%d reassignments, want 1", s.Reassignments)
	}
	// history, counted to now (540): a 6 updates, b 5, c and d 1 each.
	history := 6.0/540*10 + 5.0/540*10 + 1.0/540*10 + 1.0/540*10
	demand := 2*10/60.0 + 2*10/240.0
	theta := demand / history
	if got := s.Recent[0].Theta; math.Abs(got-theta) > 1e-9 {
		t.Fatalf("θ = %.6f, want %.6f", got, theta)
	}
	checkGroups(t, s, 60*theta*0.9, 240*theta*0.9)
}

// TestAdaptiveRule: Nutch's rule, ×(1−dec) after a change, ×(1+inc) after
// none, within the bounds; no reassignments.
func TestAdaptiveRule(t *testing.T) {
	m, clock := twoGroups(t, Adaptive, func(o *Options) { o.RateCap = 0 })
	updated(m, clock, "a", time.Minute, time.Second, true)
	if d, _ := m.Interval("a"); d != 48*time.Minute {
		t.Errorf("after a change: %v, want 48m", d)
	}
	updated(m, clock, "a", 2*time.Minute, time.Second, false)
	if d, _ := m.Interval("a"); math.Abs(d.Minutes()-48*1.4) > 1e-6 {
		t.Errorf("after no change: %v, want 67.2m", d)
	}
	for i := range 40 {
		updated(m, clock, "c", time.Duration(3+i)*time.Minute, time.Second, true)
	}
	if d, _ := m.Interval("c"); d != time.Minute {
		t.Errorf("after 40 changes: %v, want the 1m floor", d)
	}
	if s := m.Stats(); s.Reassignments != 0 {
		t.Errorf("adaptive reassigned %d times", s.Reassignments)
	}
}

// TestRateCap: however short a policy wants an interval, a channel is not
// recrawled more than RateCap times as often as it changes.
func TestRateCap(t *testing.T) {
	m, clock := twoGroups(t, Adaptive, nil)
	for i := range 40 {
		updated(m, clock, "a", time.Duration(1+i)*time.Minute, time.Second, true)
	}
	if d, _ := m.Interval("a"); d != 30*time.Minute {
		t.Errorf("capped interval %v, want 30m (half the 60m change interval)", d)
	}
}

// TestOptimalPolicy: with a budget of 0.01 robot, 1-minute recrawls and a
// day's horizon (14.4 crawls), the policy spaces Wolf's allocation T/(x+1).
// Crawls this scarce go to the slow channels first: a crawl of a channel
// changing every hour hardly makes it fresher (Cho and Garcia-Molina's
// observation, which Wolf's optimum shares).
func TestOptimalPolicy(t *testing.T) {
	m, clock := twoGroups(t, Optimal, func(o *Options) { o.RateCap = 0 })
	m.SetCapacity(0.01)
	for _, id := range []ChannelID{"a", "b", "c", "d"} {
		updated(m, clock, id, time.Minute, time.Minute, true)
	}
	clock.Set(t0.Add(30 * time.Minute))
	m.Due()
	s := m.Stats()
	if s.Reassignments != 1 || s.Recent[0].Budget != 0.01 {
		t.Fatalf("reassignments %+v", s.Recent)
	}
	items := []Item{{Rate: RateOf(time.Hour)}, {Rate: RateOf(time.Hour)}, {Rate: RateOf(4 * time.Hour)}, {Rate: RateOf(4 * time.Hour)}}
	for i := range items {
		items[i].Cost = 60
		items[i].Max = 1439
	}
	x, err := Allocate(items, 0.01*86400, 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	for i, id := range []ChannelID{"a", "b", "c", "d"} {
		want := 24 * time.Hour / time.Duration(x[i]+1)
		if d, _ := m.Interval(id); d != want {
			t.Errorf("%s: interval %v, want %v (x = %d)", id, d, want, x[i])
		}
	}
	if x[0] >= x[2] {
		t.Errorf("crawls %v: the slow channels should get more", x)
	}
}

// TestDueOrderAndStats: tasks come due in order of their next time, once
// per interval, with their deadlines; Stats counts them.
func TestDueOrderAndStats(t *testing.T) {
	m, clock := twoGroups(t, Fixed, nil)
	m.AddInterSite("a", "http://a.example/from-b")
	m.AddInterSite("a", "http://a.example/from-b")
	seen := map[ChannelID]int{}
	for range 24 * 60 {
		clock.Advance(time.Minute)
		for _, task := range m.Due() {
			seen[task.Channel]++
			if task.Deadline.Sub(task.Submitted) <= 0 {
				t.Fatalf("task %+v has no time to run", task)
			}
			if task.Channel == "a" && len(task.Seeds) != 1 {
				t.Fatalf("a's seeds %v, want the inter-site URL once", task.Seeds)
			}
		}
	}
	if seen["a"] != 24 || seen["c"] != 6 {
		t.Errorf("in a day: %v; want a 24 times and c 6 times", seen)
	}
	s := m.Stats()
	if s.Groups[0].TotalSubmitted != 48 || s.Groups[1].TotalSubmitted != 12 {
		t.Errorf("stats %+v", s.Groups)
	}
	if err := m.Add(ChannelSpec{ID: "a"}); err == nil {
		t.Error("a channel added twice")
	}
}

func ExampleManager() {
	clock := clk.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	opt := Defaults()
	opt.Policy, opt.Clock = Fixed, clock
	m, _ := New(opt, []ChannelSpec{{ID: "news.example.org", Rate: RateOf(time.Hour)}})
	clock.Advance(time.Hour)
	for _, task := range m.Due() {
		// ... run the task, then:
		m.Done(task, Outcome{Success: true, Changed: true, Duration: time.Minute})
		fmt.Println(task.Channel)
	}
	// Output: news.example.org
}

// TestFixedFollowsTheEstimate: fixed recrawls every 1/λ̂, and follows λ̂
// when Reestimate changes it.
func TestFixedFollowsTheEstimate(t *testing.T) {
	m, clock := twoGroups(t, Fixed, nil)
	if d, _ := m.Interval("c"); d != 240*time.Minute {
		t.Fatalf("c's interval %v, want 240m", d)
	}
	// Eleven visits an hour apart, a change at each: λ̂ rises well above the
	// prior one change in 240 minutes.
	for i := 1; i <= 11; i++ {
		updated(m, clock, "c", time.Duration(i)*time.Hour, time.Minute, true)
	}
	m.Reestimate(8)
	updated(m, clock, "c", 12*time.Hour, time.Minute, true)
	want, err := EstimateRegular(10, 0, time.Hour) // the first visit has no interval
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := m.Interval("c"); math.Abs(d.Seconds()-want.Interval().Seconds()) > 1 {
		t.Errorf("after re-estimating: %v, want %v", d, want.Interval())
	}
}

func ExampleAllocate() {
	day := 24 * time.Hour
	items := []Item{
		{Rate: RateOf(day / 10)}, // changes 10 times a day
		{Rate: RateOf(day)},      // once a day
		{Rate: RateOf(7 * day)},  // once a week
	}
	x, _ := Allocate(items, 6, day) // 6 crawls a day among them
	// x_i crawls in a day space a page's crawls day/(x_i+1) apart: the
	// weekly page keeps its one crawl a day, the fast one gets 5.
	fmt.Println(x)
	// Output: [4 2 0]
}
