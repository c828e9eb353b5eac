package recrawl

import (
	"errors"
	"math"
	"testing"
	"time"

	clk "lidi/engine/clock"
)

// TestRestoreAfterRestart: a manager's channel states, saved after an IIR
// reassignment and restored into a new manager over the same channels,
// give the same groups, intervals, rates and counters, and the recrawls
// fall due one interval after each channel's last update.
func TestRestoreAfterRestart(t *testing.T) {
	m, clock := twoGroups(t, IIR, nil)
	submit(m, "a", 6)
	for i := 1; i <= 6; i++ {
		updated(m, clock, "a", time.Duration(50*i)*time.Minute, time.Minute, true)
	}
	if m.Stats().Reassignments != 1 {
		t.Fatal("no reassignment to restore")
	}
	saved := m.ChannelStates()
	before := m.Stats()

	clock2 := clk.NewFake(clock.Now())
	opt := Defaults()
	opt.Policy, opt.Groups, opt.Clock = IIR, 2, clock2
	var specs []ChannelSpec
	for _, s := range saved {
		specs = append(specs, ChannelSpec{ID: s.ID, Rate: s.Rate})
	}
	m2, err := New(opt, specs)
	if err != nil {
		t.Fatal(err)
	}
	if err := m2.Restore(saved); err != nil {
		t.Fatal(err)
	}
	after := m2.Stats()
	for i := range before.Groups {
		b, a := before.Groups[i], after.Groups[i]
		if a.Channels != b.Channels || a.Interval != b.Interval || a.TotalUpdates != b.TotalUpdates || a.TotalSubmitted != b.TotalSubmitted {
			t.Errorf("group %d: before %+v, after %+v", i, b, a)
		}
	}
	for i, s := range m2.ChannelStates() {
		if s != saved[i] {
			t.Errorf("channel %d: %+v, want %+v", i, s, saved[i])
		}
	}
	iv, _ := m2.Interval("a")
	next, _ := m2.NextDue()
	if want := t0.Add(300 * time.Minute).Add(iv); next.After(want) {
		t.Errorf("next recrawl %v, want by %v (a's last update plus its interval)", next, want)
	}
	if err := m2.Restore([]ChannelState{{ID: "zz"}}); !errors.Is(err, ErrConfig) {
		t.Errorf("unknown channel: %v, want ErrConfig", err)
	}
}

// TestRegroup: channels added with no estimate sit in the slowest group;
// once estimated, Regroup spreads them by rate and restarts the policy.
func TestRegroup(t *testing.T) {
	clock := clk.NewFake(t0)
	opt := Defaults()
	opt.Policy, opt.Groups, opt.Clock = IIR, 2, clock
	m, err := New(opt, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []ChannelID{"fast1", "fast2", "slow1", "slow2"} {
		if err := m.Add(ChannelSpec{ID: id}); err != nil {
			t.Fatal(err)
		}
	}
	if s := m.Stats(); s.Groups[1].Channels != 4 {
		t.Fatalf("channels without estimates: groups %+v, want all in the slowest", s.Groups)
	}
	// Hourly visits: the fast channels changed at each, the slow ones at
	// one in four.
	for i := 1; i <= 40; i++ {
		clock.Set(t0.Add(time.Duration(i) * time.Hour))
		for _, id := range []ChannelID{"fast1", "fast2", "slow1", "slow2"} {
			m.Done(Task{Channel: id}, Outcome{Success: true, Changed: id[0] == 'f' || i%4 == 0})
		}
	}
	m.Reestimate(8)
	m.Regroup()
	s := m.Stats()
	if s.Groups[0].Channels != 2 || s.Groups[1].Channels != 2 {
		t.Fatalf("after Regroup: %+v", s.Groups)
	}
	if g, _ := m.GroupOf("fast1"); g != 0 {
		t.Errorf("fast1 in group %d", g)
	}
	if s.Groups[0].Interval >= s.Groups[1].Interval || s.Reassignments == 0 {
		t.Errorf("intervals %v and %v after %d reassignments", s.Groups[0].Interval, s.Groups[1].Interval, s.Reassignments)
	}
}

func TestEstimatedFreshness(t *testing.T) {
	now := t0.Add(time.Hour)
	tests := []struct {
		rate Rate
		last time.Time
		want float64
	}{
		{RateOf(time.Hour), t0, math.Exp(-1)},
		{0, t0, 1},
		{RateOf(time.Hour), time.Time{}, 0},
		{RateOf(time.Hour), now, 1},
	}
	for _, tt := range tests {
		if got := EstimatedFreshness(tt.rate, tt.last, now); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("EstimatedFreshness(%v, %v) = %g, want %g", tt.rate, tt.last, got, tt.want)
		}
	}
}
