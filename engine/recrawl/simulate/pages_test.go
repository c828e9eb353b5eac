package simulate

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"lidi/engine/recrawl"
	"lidi/engine/recrawl/change"
)

// pagesSetup is 120 Poisson pages on 6 sites, their mean intervals from
// 30 minutes to 16 hours, the sites taking a request every 2 minutes.
func pagesSetup() PagesSetup {
	s := PagesSetup{Until: 48 * time.Hour, Budget: 0.5 * 120 / 3600, Gap: map[string]time.Duration{}}
	for i := range 120 {
		site := fmt.Sprint("site", i%6)
		s.Gap[site] = 2 * time.Minute
		mean := time.Duration(float64(30*time.Minute) * math.Pow(32, float64(i%11)/10))
		s.Pages = append(s.Pages, Page{Channel: recrawl.ChannelID(site), Site: site, Weight: float64(1 + i%7),
			Changes: change.Model{Kind: change.Poisson, Mean: mean}.Times(3, uint64(i), s.Until), Dated: i%2 == 0})
	}
	return s
}

func TestPagesPoliteAndDeterministic(t *testing.T) {
	s := pagesSetup()
	a, err := Pages(s)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Pages(s)
	bySite := map[string][]time.Duration{}
	total := 0
	for i, ts := range a {
		if !slices.Equal(ts, b[i]) {
			t.Fatalf("page %d: two runs differ", i)
		}
		bySite[s.Pages[i].Site] = append(bySite[s.Pages[i].Site], ts[1:]...)
		total += len(ts) - 1
	}
	for site, ts := range bySite {
		slices.Sort(ts)
		for j := 1; j < len(ts); j++ {
			if ts[j]-ts[j-1] < s.Gap[site] {
				t.Fatalf("%s: visits at %v and %v, closer than its gap %v", site, ts[j-1], ts[j], s.Gap[site])
			}
		}
	}
	// The budget is spent, less the first hour's wait for the probes.
	if want := s.Budget * s.Until.Seconds(); float64(total) < 0.85*want || float64(total) > 1.05*want {
		t.Errorf("%d visits, budget %.0f", total, want)
	}
	if _, err := Pages(PagesSetup{}); !errors.Is(err, ErrPagesSetup) {
		t.Errorf("empty set-up: %v", err)
	}
}
