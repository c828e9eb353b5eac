package bench

import "testing"

func TestMillionKeys(t *testing.T) {
	mark := func(mb int64) millionMark { return millionMark{peak: mb * 1e6} }
	for _, tc := range []struct {
		name     string
		millions []millionMark
		want     string
	}{
		{"before the first million", nil, ""},
		{"one million", []millionMark{mark(390)}, " peak_rss_mb_1m=390"},
		{"three millions", []millionMark{mark(390), mark(600), mark(850)},
			" peak_rss_mb_1m=390 peak_rss_mb_2m=600 peak_rss_mb_3m=850 rss_growth_mb_per_million=230"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := millionKeys(tc.millions); got != tc.want {
				t.Errorf("millionKeys = %q, want %q", got, tc.want)
			}
		})
	}
}
