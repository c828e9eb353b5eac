package engine

import (
	"slices"
	"testing"
	"time"
)

// TestStepClock drives a stepClock with a fake clock through wake-ups and
// checks that the longest one's split is kept, its steps summing to it,
// longest first.
func TestStepClock(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := t0
	k := stepClock{now: func() time.Time { return at }}
	type mark struct {
		after time.Duration
		step  LoopStep
	}
	wake := func(marks []mark, last time.Duration, rest LoopStep) {
		k.start()
		for _, m := range marks {
			at = at.Add(m.after)
			k.mark(m.step)
		}
		at = at.Add(last)
		k.end(rest)
		at = at.Add(time.Second) // asleep in select: counts for no wake-up
	}
	wake([]mark{{3 * time.Millisecond, StepResults}, {2 * time.Millisecond, StepStore}}, time.Millisecond, StepPublish)
	wake([]mark{{5 * time.Millisecond, StepDiscover}, {1 * time.Millisecond, StepResults}, {4 * time.Millisecond, StepDiscover}, {20 * time.Millisecond, StepStore}}, 2*time.Millisecond, StepPublish)
	wake([]mark{{10 * time.Millisecond, StepDetect}}, 0, StepPublish)
	if k.worst != 32*time.Millisecond {
		t.Fatalf("worst = %v, want 32ms", k.worst)
	}
	// The second wake-up's 32 ms held 20 of waits for the store: 12 of
	// its own, more than the third's 10.
	if k.own != 12*time.Millisecond {
		t.Fatalf("own = %v, want 12ms (the second wake-up less its 20 ms for the store)", k.own)
	}
	// Its steps, the store's among them.
	wantOwn := []LoopStepTime{{StepStore, 20 * time.Millisecond}, {StepDiscover, 9 * time.Millisecond}, {StepPublish, 2 * time.Millisecond}, {StepResults, time.Millisecond}}
	if got := k.ownSteps(); !slices.Equal(got, wantOwn) {
		t.Fatalf("own steps = %v, want %v (the second wake-up's)", got, wantOwn)
	}
	want := []LoopStepTime{{StepStore, 20 * time.Millisecond}, {StepDiscover, 9 * time.Millisecond}, {StepPublish, 2 * time.Millisecond}, {StepResults, time.Millisecond}}
	if got := k.steps(); !slices.Equal(got, want) {
		t.Fatalf("steps = %v, want %v", got, want)
	}
	// A longer wake-up, all of it but 1 ms a wait for the store: the
	// longest now, not the longest of the loop's own.
	wake([]mark{{time.Millisecond, StepDetect}, {40 * time.Millisecond, StepStore}}, 0, StepPublish)
	if k.worst != 41*time.Millisecond || k.own != 12*time.Millisecond {
		t.Fatalf("worst, own = %v, %v; want 41ms, 12ms", k.worst, k.own)
	}
	if got := k.ownSteps(); !slices.Equal(got, wantOwn) {
		t.Fatalf("own steps = %v, want %v (still the second wake-up's)", got, wantOwn)
	}
}

func TestLoopStepString(t *testing.T) {
	for s := range numLoopSteps {
		if s.String() == "" || s.String() == "step?" {
			t.Errorf("step %d has no name", s)
		}
	}
	if numLoopSteps.String() != "step?" {
		t.Errorf("an unknown step is named %q", numLoopSteps.String())
	}
}
