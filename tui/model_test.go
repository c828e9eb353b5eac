package tui

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"lidi/engine"
	"lidi/engine/fetch"
	"lidi/engine/record"
)

// mustShow fails unless the screen holds every one of want.
func mustShow(t *testing.T, hs *harness, want ...string) {
	t.Helper()
	s := hs.screen()
	for _, w := range want {
		if !strings.Contains(s, w) {
			t.Errorf("screen lacks %q:\n%s", w, s)
		}
	}
}

// robotsList is what the robots panel shows, without styles.
func robotsList(hs *harness) string { return ansi.Strip(hs.m.robots.view()) }

// mustNotList fails if the robots panel lists any of sites.
func mustNotList(t *testing.T, hs *harness, sites ...string) {
	t.Helper()
	l := robotsList(hs)
	for _, s := range sites {
		if strings.Contains(l, s) {
			t.Errorf("the robots panel lists %q:\n%s", s, l)
		}
	}
}

// mustNotShow fails if the screen holds any of unwanted.
func mustNotShow(t *testing.T, hs *harness, unwanted ...string) {
	t.Helper()
	s := hs.screen()
	for _, w := range unwanted {
		if strings.Contains(s, w) {
			t.Errorf("screen shows %q:\n%s", w, s)
		}
	}
}

func TestStatsReachTheScreen(t *testing.T) {
	c := newFake(crawlSeries(30, engine.StateRunning))
	hs := newHarness(t, c, 120, 40)
	mustShow(t, hs, "lidi", "running") // the first poll is immediate
	hs.refresh(40)
	last := c.series[len(c.series)-1]
	mustShow(t, hs,
		count(last.Pages)+" pages",
		count(last.QueueDepth)+" queued",
		count(last.Discovered)+" found",
		rate(last.FetchesPerSec)+" fetches/s",
		count(last.Errors)+" errors",
		fmt.Sprintf("%d of %d busy", last.RobotsBusy, last.Robots), "opic",
		"1:02:29 elapsed", // Stats.Time - Stats.Started
		"no PageRank run yet",
		"parked after 5 failed visits",
		"robots.txt answered 503",
		"waiting: "+count(int64(last.SitesWaiting))+" sites", "for their politeness delay",
	)
	// Every visit in flight is listed, with its time.
	for _, v := range last.Visits {
		mustShow(t, hs, v.Site, span(last.Time.Sub(v.Started)))
	}
	if got := len(hs.m.hist.pages.vals); got != 30 {
		t.Errorf("history has %d samples of 30 snapshots a second apart", got)
	}
	// Without recrawls the pages are the fetches: no figure of their own.
	mustNotShow(t, hs, "fetches  ", "recrawls")
}

// With recrawls, the header and the end say what each figure counts:
// pages stored (distinct URLs), fetches (recrawls included), recrawls;
// the coverage chart's pages are the pages stored.
func TestPagesFetchesRecrawls(t *testing.T) {
	series := crawlSeries(5, engine.StateDone)
	for i := range series {
		series[i] = measured(series[i])
	}
	c := newFake(series)
	hs := newHarness(t, c, 160, 40)
	hs.refresh(10)
	last := c.series[len(c.series)-1]
	if last.Fetches != last.Pages+last.Recrawls || last.Recrawls == 0 {
		t.Fatalf("fake series: %d pages, %d fetches, %d recrawls", last.Pages, last.Fetches, last.Recrawls)
	}
	mustShow(t, hs,
		count(last.Pages)+" pages  "+count(last.Fetches)+" fetches  "+count(last.Recrawls)+" recrawls",
		count(last.Pages)+" pages, "+count(last.Fetches)+" fetches ("+count(last.Recrawls)+" recrawls)",
		"pages stored",
	)
}

func TestPanelsBeforeTheirFirstMeasurement(t *testing.T) {
	s := crawlSeries(1, engine.StateRunning)
	c := newFake(s)
	hs := newHarness(t, c, 120, 40)
	if n := strings.Count(hs.screen(), "no PageRank run yet"); n != 1 {
		t.Errorf("%d panels say no PageRank run yet, want 1 (coverage)", n)
	}
	mustShow(t, hs, "recrawling is off")
	c.series = []engine.Stats{measured(s[0])}
	c.next = 0
	hs.refresh(1)
	mustNotShow(t, hs, "no PageRank run yet", "recrawling is off")
	mustShow(t, hs, "99.9% of PageRank", "124,000 pages", "iir · fresh 82.3%", "g1", "140", "6h", "45m", "3d", "16h", "75%")
	// Zoomed, the coverage curve gets a labelled scale.
	for hs.m.focus != coveragePanelID {
		hs.press("tab")
	}
	hs.press("enter")
	mustShow(t, hs, "100.0%┤", "0.0%┤", "against the true PageRank")
	// With room for both, the oracle's curve is drawn under the estimate;
	// without an oracle, only the estimate.
	mustShow(t, hs, "share of PageRank of the graph known", "share of the true PageRank")
	noOracle := measured(s[0])
	for i := range noOracle.Coverage {
		noOracle.Coverage[i].Oracle = -1
	}
	c.series = []engine.Stats{noOracle}
	c.next = 0
	hs.refresh(1)
	mustShow(t, hs, "100.0%┤", "99.9% of PageRank")
	mustNotShow(t, hs, "true PageRank")
}

func TestPauseAndResume(t *testing.T) {
	c := newFake(crawlSeries(5, engine.StateRunning))
	hs := newHarness(t, c, 80, 24)
	hs.refresh(5)
	hs.press("r") // not paused: nothing to resume
	if c.resumes != 0 {
		t.Fatalf("r resumed a running crawl")
	}
	hs.press("p")
	if c.pauses != 1 || !c.paused {
		t.Fatalf("p: %d Pause calls", c.pauses)
	}
	hs.refresh(1)
	mustShow(t, hs, "PAUSED", "no new fetch starts", "p resume")
	hs.press("p")
	if c.resumes != 1 || c.paused {
		t.Fatalf("p again: %d Resume calls", c.resumes)
	}
	hs.refresh(1)
	mustShow(t, hs, "running", "p pause")
	mustNotShow(t, hs, "PAUSED")
	hs.press("p")
	hs.refresh(1)
	hs.press("r")
	if c.resumes != 2 || c.paused {
		t.Fatalf("r: %d Resume calls, paused %v", c.resumes, c.paused)
	}
}

// A snapshot taken before the engine has paused shows "pausing…", not a
// state the engine is not in yet.
func TestPausingShownUntilTheEngineIsPaused(t *testing.T) {
	c := newFake(crawlSeries(5, engine.StateRunning))
	hs := newHarness(t, c, 80, 24)
	hs.refresh(5)
	_, cmd := hs.m.Update(keyMsg("p")) // the Pause call has not run yet
	mustShow(t, hs, "pausing…")
	mustNotShow(t, hs, "PAUSED")
	hs.send(statsMsg{c.Stats()}) // a snapshot from before the pause
	mustShow(t, hs, "pausing…")
	hs.run(cmd)
	hs.refresh(1)
	mustShow(t, hs, "PAUSED")
}

// Steering calls run in goroutines of their own; a call that arrives after
// a newer one is dropped, so the crawl ends up as the last key asked.
func TestSteeringKeepsTheOrderOfKeys(t *testing.T) {
	c := newFake(crawlSeries(2, engine.StateRunning))
	hs := newHarness(t, c, 80, 24)
	pause := hs.m.setPaused(true)
	resume := hs.m.setPaused(false)
	resume()
	pause() // late: dropped
	if c.paused || c.pauses != 0 || c.resumes != 1 {
		t.Errorf("paused %v after pause then resume ran out of order (%d pauses, %d resumes)", c.paused, c.pauses, c.resumes)
	}
	more := hs.m.addRobots(1)
	evenMore := hs.m.addRobots(1)
	evenMore()
	more() // late: dropped
	if !slices.Equal(c.robotCalls, []int{18}) {
		t.Errorf("SetRobots calls %v, want [18]", c.robotCalls)
	}
}

func TestRobotsPlusMinus(t *testing.T) {
	c := newFake(crawlSeries(3, engine.StateRunning))
	hs := newHarness(t, c, 80, 24)
	hs.refresh(3)
	hs.press("+", "+", "-", "−", "plus", "=")
	if want := []int{17, 18, 17, 16, 17, 18}; !slices.Equal(c.robotCalls, want) {
		t.Errorf("SetRobots calls %v, want %v", c.robotCalls, want)
	}
	hs.refresh(1)
	mustShow(t, hs, fmt.Sprintf("robots %d/18", hs.m.stats.RobotsBusy), "of 18 busy")

	// Never below one robot.
	one := crawlSeries(1, engine.StateRunning)
	one[0].Robots = 1
	c = newFake(one)
	hs = newHarness(t, c, 80, 24)
	hs.press("-")
	if len(c.robotCalls) != 0 {
		t.Errorf("SetRobots%v with one robot", c.robotCalls)
	}
	mustShow(t, hs, "1 is the fewest")
}

func TestRobotStep(t *testing.T) {
	c := newFake(crawlSeries(1, engine.StateRunning))
	m := New(c, Options{RobotStep: 4})
	hs := &harness{t: t, m: m, c: c}
	hs.send(tea.WindowSizeMsg{Width: 80, Height: 24})
	hs.run(m.Init())
	hs.press("+", "-", "-")
	if want := []int{20, 16, 12}; !slices.Equal(c.robotCalls, want) {
		t.Errorf("SetRobots calls %v, want %v", c.robotCalls, want)
	}
}

func TestSnapshot(t *testing.T) {
	c := newFake(crawlSeries(3, engine.StateRunning))
	hs := newHarness(t, c, 100, 30)
	hs.refresh(3)
	for hs.m.focus != eventsPanelID {
		hs.press("tab")
	}
	hs.press("enter") // the events panel, wide enough for the path
	hs.press("s")
	if c.snapshots != 1 {
		t.Fatalf("%d Snapshot calls", c.snapshots)
	}
	mustShow(t, hs, "snapshot written to "+c.snapshotPath)
	// The event log has it too, once, even when the engine logs it as well.
	if n := strings.Count(hs.screen(), "written to "+c.snapshotPath); n != 2 {
		t.Errorf("the path is on screen %d times, want 2 (status line and events)", n)
	}
	for i := range c.series {
		c.series[i].Events = append(c.series[i].Events, record.Event{Time: hs.clock, Kind: "snapshot", Text: c.snapshotPath})
	}
	c.next = 0
	hs.refresh(1)
	if n := strings.Count(hs.screen(), c.snapshotPath); n != 2 {
		t.Errorf("the path is on screen %d times once the engine logged it too, want 2", n)
	}

	// A status message gives way to the crawl's own news after a while.
	hs.clock = hs.clock.Add(statusTTL)
	hs.refresh(1)
	if strings.Contains(hs.screen(), "snapshot written to") {
		t.Error("the status message outlived its time")
	}

	c.snapshotErr = errors.New("storage: database is locked")
	hs.press("s")
	mustShow(t, hs, "snapshot failed: storage: database is locked", "snapshot-failed failed: storage: database is locked")
}

// While a snapshot is being written, s does not start another.
func TestSnapshotOneAtATime(t *testing.T) {
	c := newFake(crawlSeries(1, engine.StateRunning))
	hs := newHarness(t, c, 80, 24)
	_, cmd := hs.m.Update(keyMsg("s"))
	mustShow(t, hs, "writing a snapshot…")
	_, again := hs.m.Update(keyMsg("s"))
	if again != nil {
		t.Error("a second snapshot started while the first was being written")
	}
	mustShow(t, hs, "being written already")
	hs.run(cmd)
	mustShow(t, hs, "snapshot written to")
}

func TestFilterRobotsBySite(t *testing.T) {
	c := newFake(crawlSeries(1, engine.StateRunning))
	hs := newHarness(t, c, 120, 40)
	var orgs, others []string
	for _, v := range c.series[0].Visits {
		if strings.HasSuffix(v.Site, ".org") {
			orgs = append(orgs, v.Site)
		} else {
			others = append(others, v.Site)
		}
	}
	if len(orgs) == 0 || len(others) < 2 {
		t.Fatalf("fixture lacks the sites the test filters: %v %v", orgs, others)
	}
	mustShow(t, hs, append(orgs, others...)...)
	hs.press("tab") // the filter focuses the robots panel wherever the focus is
	hs.press("/")
	if !hs.m.robots.editing || hs.m.focus != robotsPanelID {
		t.Fatal("/ did not open the filter on the robots panel")
	}
	hs.typeText("EXAMPLE.ORG") // case does not matter
	mustShow(t, hs, append([]string{"/EXAMPLE.ORG"}, orgs...)...)
	mustNotList(t, hs, others...)
	hs.typeText("q") // typed into the filter: no quit
	if hs.quit {
		t.Fatal("q quit while typing a filter")
	}
	hs.press("backspace", "enter")
	if hs.m.robots.editing || hs.m.robots.filter != "EXAMPLE.ORG" {
		t.Fatalf("enter: editing %v, filter %q", hs.m.robots.editing, hs.m.robots.filter)
	}
	hs.refresh(1)
	mustShow(t, hs, fmt.Sprintf("/EXAMPLE.ORG · %d of %d visits", len(orgs), len(orgs)+len(others)), "esc clears")
	mustShow(t, hs, orgs...)
	mustNotList(t, hs, others...)
	hs.press("esc")
	if hs.m.robots.filter != "" {
		t.Fatalf("esc left the filter %q", hs.m.robots.filter)
	}
	mustShow(t, hs, others...)

	// esc while typing clears too; ctrl+u empties the input.
	hs.press("/")
	hs.typeText(others[0])
	hs.press("ctrl+u")
	hs.typeText(others[1])
	mustShow(t, hs, others[1])
	mustNotList(t, hs, others[0])
	hs.press("esc")
	if hs.m.robots.editing || hs.m.robots.filter != "" {
		t.Fatal("esc while typing kept the filter")
	}
	mustShow(t, hs, others...)

	// A filter that matches nothing says so.
	hs.press("/")
	hs.typeText("nowhere.invalid")
	hs.press("enter")
	mustShow(t, hs, "no visit matches the filter", "none matches")

	// ctrl+c quits even while typing.
	hs.press("/", "ctrl+c")
	if !hs.quit || !hs.m.quitting {
		t.Fatal("ctrl+c did not quit while typing a filter")
	}
}

func TestFocusAndZoom(t *testing.T) {
	c := newFake(crawlSeries(3, engine.StateRunning))
	hs := newHarness(t, c, 80, 24)
	hs.refresh(3)
	if hs.m.focus != robotsPanelID {
		t.Fatalf("initial focus on %d", hs.m.focus)
	}
	order := []panelID{queuePanelID, throughputPanelID, dnsPanelID, coveragePanelID, intervalsPanelID, eventsPanelID, robotsPanelID}
	for _, want := range order {
		hs.press("tab")
		if hs.m.focus != want {
			t.Fatalf("tab: focus on %d, want %d", hs.m.focus, want)
		}
	}
	hs.press("shift+tab")
	if hs.m.focus != eventsPanelID {
		t.Fatalf("shift+tab: focus on %d", hs.m.focus)
	}
	// Arrows move to the panel on that side.
	for _, step := range []struct {
		key  string
		want panelID
	}{
		{"up", robotsPanelID}, {"right", queuePanelID}, {"down", throughputPanelID},
		{"down", dnsPanelID}, {"left", robotsPanelID}, {"down", eventsPanelID},
		{"right", dnsPanelID}, {"down", coveragePanelID}, {"down", intervalsPanelID},
		{"down", intervalsPanelID}, {"right", intervalsPanelID}, {"left", eventsPanelID},
	} {
		hs.press(step.key)
		if hs.m.focus != step.want {
			t.Fatalf("%s: focus on %d, want %d", step.key, hs.m.focus, step.want)
		}
	}
	// The focused panel's title rule is drawn heavier.
	if !strings.Contains(hs.screen(), "━ Events ━") {
		t.Errorf("focused panel not marked:\n%s", hs.screen())
	}

	hs.press("tab", "tab") // to queue
	hs.press("enter")
	if !hs.m.zoomed {
		t.Fatal("enter did not zoom")
	}
	mustShow(t, hs, "━ Queue", "URLs not fetched, by reason:", "nofollow 388", "esc unzoom")
	mustNotShow(t, hs, "Throughput", "Events", "Robots")
	hs.press("tab") // tab moves the zoom to the next panel
	mustShow(t, hs, "━ Throughput", "bytes/s", "refused")
	hs.press("esc")
	if hs.m.zoomed {
		t.Fatal("esc did not unzoom")
	}
	hs.press("enter", "enter")
	if hs.m.zoomed {
		t.Fatal("enter did not unzoom")
	}
	mustShow(t, hs, "Robots", "Events", "Queue")
}

func TestZoomedListsScroll(t *testing.T) {
	c := newFake(crawlSeries(1, engine.StateRunning))
	hs := newHarness(t, c, 80, 24)
	hs.press("enter") // robots: 14 visits and 32 waiting sites need scrolling at 24 lines
	first := hs.screen()
	if !strings.Contains(first, "site") || strings.Contains(first, "… ") && strings.Contains(first, " more") {
		t.Fatalf("zoomed robots panel:\n%s", first)
	}
	hs.press("pgdown", "pgdown", "pgdown")
	last := c.series[0].Waiting
	lastSite := slices.MaxFunc(last, func(a, b engine.WaitingSite) int { return a.Until.Compare(b.Until) }).Site
	mustShow(t, hs, lastSite)
	hs.press("pgup", "pgup", "pgup", "up")
	if hs.screen() != first {
		t.Errorf("scrolling back did not return to the top:\n%s", hs.screen())
	}
	hs.press("esc")
	// The events panel scrolls back from the newest.
	for range 70 {
		c.series[0].Events = append(c.series[0].Events, record.Event{Time: t0.Add(time.Hour), Kind: "mirror", Text: "event " + count(int64(len(c.series[0].Events)))})
	}
	c.next = 0
	hs.refresh(1)
	for hs.m.focus != eventsPanelID {
		hs.press("tab")
	}
	hs.press("enter")
	mustShow(t, hs, "event 74")
	mustNotShow(t, hs, "event 10 ")
	for range 10 {
		hs.press("pgup")
	}
	mustShow(t, hs, "resumed a crawl")
	mustNotShow(t, hs, "event 74")
}

func TestHelpPage(t *testing.T) {
	c := newFake(crawlSeries(1, engine.StateRunning))
	hs := newHarness(t, c, 80, 24)
	hs.press("?")
	// Every key binding the console has is on the page.
	for _, k := range []string{"pause / resume", "snapshot", "more robots", "fewer robots", "next panel",
		"previous panel", "move focus", "zoom", "scroll (zoomed)", "filter sites", "clear filter", "quit, state saved"} {
		mustShow(t, hs, k)
	}
	mustShow(t, hs, "Throughput  fetches/s and bytes/s")
	hs.press("?")
	mustShow(t, hs, "Robots", "Queue")
	mustNotShow(t, hs, "filter sites")
	hs.press("?", "esc")
	mustNotShow(t, hs, "filter sites")
}

func TestQuit(t *testing.T) {
	for _, k := range []string{"q", "ctrl+c"} {
		c := newFake(crawlSeries(1, engine.StateRunning))
		hs := newHarness(t, c, 80, 24)
		if hs.m.quitting {
			t.Fatal("quitting before any key")
		}
		hs.press(k)
		if !hs.quit || !hs.m.quitting {
			t.Errorf("%s did not quit", k)
		}
		mustShow(t, hs, "quitting: the crawl stops and saves its state")
	}
}

func TestCrawlEnded(t *testing.T) {
	c := newFake(crawlSeries(20, engine.StateDone))
	hs := newHarness(t, c, 80, 24)
	hs.refresh(25)
	last := c.series[len(c.series)-1]
	mustShow(t, hs, "DONE", "crawl finished", count(last.Pages)+" pages", "final figures kept", "q quits", "the frontier is empty")
	hs.press("p", "+")
	if c.pauses != 0 || len(c.robotCalls) != 0 {
		t.Error("steered a crawl that has ended")
	}
	mustShow(t, hs, "the crawl has ended")
	if hs.quit {
		t.Fatal("the console quit at the end of the crawl")
	}
	hs.press("s") // a final snapshot still works
	if c.snapshots != 1 {
		t.Error("no snapshot at the end of the crawl")
	}

	failed := crawlSeries(2, engine.StateFailed)
	hs = newHarness(t, newFake(failed), 80, 24)
	hs.refresh(3)
	mustShow(t, hs, "FAILED", "crawl failed")
}

// Text from the crawl cannot drive the terminal: escape sequences and line
// breaks in a host name or an event are neutralised.
func TestHostileTextIsNeutralised(t *testing.T) {
	s := crawlSeries(1, engine.StateRunning)
	s[0].Events = append(s[0].Events, record.Event{Time: t0.Add(time.Hour), Kind: "robots-5xx",
		Site: "evil.example\x1b]0;pwned\x07.com", Text: "line one\nline two\x1b[2J\u009b2J"})
	s[0].Visits[0].URL = "https://evil.example/\x1b[31mred\r\n"
	c := newFake(s)
	hs := newHarness(t, c, 120, 40)
	for hs.m.focus != eventsPanelID {
		hs.press("tab")
	}
	hs.press("enter")
	raw := hs.m.View().Content
	for _, bad := range []string{"\x1b]0;pwned", "\x1b[2J", "\u009b", "\x1b[31mred", "\r"} {
		if strings.Contains(raw, bad) {
			t.Errorf("the screen carries %q", bad)
		}
	}
	mustShow(t, hs, "line one line two[2J2J", "evil.example]0;pwned.com")
	checkFits(t, raw, 120, 40, "hostile text")
}

func TestHistorySamplesOncePerSecond(t *testing.T) {
	var h history
	at := t0
	for i := range 40 {
		s := engine.Stats{Time: at.Add(time.Duration(i) * 250 * time.Millisecond), FetchesPerSec: float64(i), Errors: int64(i * 10)}
		h.add(&s)
	}
	if got := len(h.pages.vals); got != 10 {
		t.Fatalf("%d samples from 10 s of snapshots", got)
	}
	if h.pages.vals[1] != 4 {
		t.Errorf("second sample %v, want the snapshot 1 s after the first", h.pages.vals[1])
	}
	if h.errors.vals[1] != 40 {
		t.Errorf("errors/s %v, want 40 (40 errors in 1 s)", h.errors.vals[1])
	}
	// Without times, every snapshot is a sample; the series stays bounded.
	var u history
	for i := range historyLen + 10 {
		u.add(&engine.Stats{QueueDepth: int64(i)})
	}
	if len(u.queue.vals) != historyLen || u.queue.vals[historyLen-1] != historyLen+9 {
		t.Errorf("unbounded or wrong: %d samples, last %v", len(u.queue.vals), u.queue.vals[len(u.queue.vals)-1])
	}
}

// Before the first snapshot the console still draws, and says so.
func TestBeforeTheFirstSnapshot(t *testing.T) {
	m := New(newFake(crawlSeries(1, engine.StateRunning)), Options{})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	s := ansi.Strip(m.View().Content)
	if !strings.Contains(s, "connecting") {
		t.Errorf("no connecting state:\n%s", s)
	}
	checkFits(t, m.View().Content, 80, 24, "before the first snapshot")
	if !m.View().AltScreen {
		t.Error("the view does not ask for the alternate screen")
	}
}

func TestPaste(t *testing.T) {
	c := newFake(crawlSeries(1, engine.StateRunning))
	hs := newHarness(t, c, 80, 24)
	hs.send(tea.PasteMsg{Content: "ignored"}) // not typing a filter
	hs.press("/")
	hs.send(tea.PasteMsg{Content: "blog.\nexample"})
	if got := string(hs.m.robots.input); got != "blog. example" {
		t.Errorf("pasted %q", got)
	}
}

// The robots panel says how many sites' robots.txt was read after
// redirects and, zoomed, where each was read and through which answers,
// or why the chain was given up.
func TestRobotsChainsShown(t *testing.T) {
	s := crawlSeries(3, engine.StateRunning)
	last := &s[len(s)-1]
	last.RobotsRedirected = 2
	last.RobotsChains = []engine.RobotsChain{
		{Site: "http://example.org", URL: "https://www.example.org/robots.txt", Status: 200,
			Redirects: []fetch.Hop{{URL: "http://example.org/robots.txt", Status: 301}, {URL: "https://example.org/robots.txt", Status: 308}}},
		{Site: "http://loop.example.net", URL: "http://loop.example.net/b", Status: 302, End: fetch.ChainLoop,
			Redirects: []fetch.Hop{{URL: "http://loop.example.net/robots.txt", Status: 302}}},
	}
	c := newFake(s)
	hs := newHarness(t, c, 120, 40)
	hs.refresh(5)
	mustShow(t, hs, "2 robots.txt redirected")
	for hs.m.focus != robotsPanelID {
		hs.press("tab")
	}
	hs.press("enter")
	mustShow(t, hs, "robots.txt read after redirects: 2 sites",
		"example.org", "301 → 308 → 200", "read at https://www.example.org/robots.txt",
		"302 → redirect-loop: read as no robots.txt, all allowed")
}
