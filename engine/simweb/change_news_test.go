package simweb

import (
	"bytes"
	"net/http"
	"strconv"
	"testing"
	"time"
)

func TestNewsSiteAddsArticles(t *testing.T) {
	w := testWeb(t, Options{Seed: 7, Sites: 12, Pages: 120, Change: ShapeNews.Options()})
	ch := w.Changes()
	news := -1
	for c := range ch.Channels() {
		if ch.News(c) {
			news = c
			break
		}
	}
	if news < 0 {
		t.Fatal("the news shape has no news site")
	}
	clk := newFakeClock()
	const scale = 600
	s := startServer(t, w, ServerConfig{Now: clk.Now, TimeScale: scale})
	c := resolvingClient(s, 1)
	home := w.Site(news).HomePage
	front := s.URL(home)
	article := func(k int) string { return front + "news/" + strconv.Itoa(k) + ".html" }

	// Advance to just after the 12th article: the home page lists 12..3,
	// article 12 exists, 13 does not yet.
	pub := ch.Articles(news, 48*time.Hour)
	if len(pub) < NewsList+3 {
		t.Fatalf("%d articles in two days", len(pub))
	}
	clk.Advance((pub[11]+time.Second)/scale + time.Millisecond)
	if got := ch.Published(news, s.Clock().Offset()); got != 12 {
		t.Fatalf("%d articles published, want 12", got)
	}
	_, body := get(t, c, front)
	for k := 1; k <= 13; k++ {
		listed := bytes.Contains(body, []byte(`href="/news/`+strconv.Itoa(k)+`.html"`))
		if want := k >= 3 && k <= 12; listed != want {
			t.Errorf("article %d listed %v on the home page, want %v", k, listed, want)
		}
	}
	for _, tc := range []struct {
		k    int
		want int
	}{{1, 200}, {12, 200}, {13, 404}, {0, 404}} {
		resp, _ := get(t, c, article(tc.k))
		if resp.StatusCode != tc.want {
			t.Errorf("article %d: %d, want %d", tc.k, resp.StatusCode, tc.want)
		}
	}
	if site, k, ok := w.Article(article(12)); !ok || site != news || k != 12 {
		t.Errorf("Article(%s) = %d, %d, %v", article(12), site, k, ok)
	}
	if _, _, ok := w.Article(w.URL(home)); ok {
		t.Error("the home page is taken for an article")
	}
	// The home page is a changing page whose changes are the articles.
	if v := ch.Version(home, s.Clock().Offset()); v != 12 {
		t.Errorf("home page at version %d, want 12", v)
	}
	resp, _ := get(t, c, article(5))
	if lm := resp.Header.Get("Last-Modified"); ch.Validators(news).LastModified() {
		if got, _ := http.ParseTime(lm); !got.Equal(s.Clock().Time(pub[4]).Truncate(time.Second)) {
			t.Errorf("article 5 Last-Modified %v, want its publication %v", got, s.Clock().Time(pub[4]))
		}
	}
}

func TestParseChangeShapes(t *testing.T) {
	all, err := ParseChangeShapes("all")
	if err != nil || len(all) != len(ChangeShapes()) {
		t.Fatalf("all: %v, %v", all, err)
	}
	for _, sh := range all {
		o := sh.Options()
		if !o.Enabled {
			t.Errorf("%s: not enabled", sh)
		}
		if _, err := NewChanges(1, o, []int{5, 5, 5, 5}); err != nil {
			t.Errorf("%s: %v", sh, err)
		}
	}
	if got, err := ParseChangeShapes("news, quasi"); err != nil || len(got) != 2 || got[1] != ShapeQuasi {
		t.Errorf("news, quasi: %v, %v", got, err)
	}
	if _, err := ParseChangeShapes("sarss,weekly"); err == nil {
		t.Error("an unknown shape was accepted")
	}
}
