package tui

import (
	"strconv"
	"strings"

	"lidi/engine"
	"lidi/engine/dedup"
)

// dupLines renders what duplicate detection counted, for the DNS &
// duplicates panel, w cells wide: the pages and rules and, zoomed, the
// rules learned by kind (recentRules adds the rules themselves).
func dupLines(c *common, dup engine.DupStats, w int, zoomed bool) []string {
	lines := []string{
		c.styles.Title.Render("dup ") + c.fit(w, c.fig(count(dup.Exact), "exact"), c.fig(count(dup.Near), "near"), c.fig(count(dup.Soft404), "soft 404")),
		"    " + c.fit(w, c.fig(count(dup.Rules), "rules"), c.fig(count(dup.Pruned), "URLs pruned by rule"), c.fig(count(dup.Withdrawn), "withdrawn")),
	}
	if !zoomed {
		return lines
	}
	var kinds []string
	for _, k := range dedup.RuleKinds() {
		if n := dup.Learned[k]; n > 0 {
			kinds = append(kinds, c.fig(count(n), k.String()))
		}
	}
	if len(kinds) > 0 {
		lines = append(lines, "    "+c.fit(w, kinds...))
	}
	return lines
}

// recentRules renders the rules learned or withdrawn last, newest first,
// as many whole ones as fit in h lines under a heading.
func recentRules(c *common, rules []dedup.Rule, w, h int) []string {
	if len(rules) == 0 || h < 3 {
		return nil
	}
	out := []string{c.styles.Title.Render("latest rules") + c.dim(", newest first")}
	for i := range rules {
		r := ruleLines(c, &rules[i], w)
		if len(out)+len(r) > h {
			break
		}
		out = append(out, r...)
	}
	return out
}

// ruleLines renders one rule: its rewrite, then its decision and
// evidence (docs/detection.md): which side a swap keeps as the original
// and why, how many pairs showed it, and how many other hosts' rules of
// its shape stood in for evidence (a prior).
func ruleLines(c *common, r *dedup.Rule, w int) []string {
	head := c.styles.Label.Render(r.Kind.String()) + " " + c.styles.Value.Render(strings.TrimPrefix(r.Origin, "http://")) + " " + r.What()
	var ev []string
	why := ""
	if r.Kind == dedup.SwapHost || r.Kind == dedup.SwapPrefix {
		orig, cp := r.To, r.Origin+r.From
		if r.Kind == dedup.SwapPrefix {
			orig = r.Origin + r.To
		}
		why = c.styles.Label.Render("by ") + c.styles.Value.Render(r.Choice.String())
		if !r.Choice.ByEvidence && !r.Choice.Reversed {
			why = c.styles.Label.Render("by arrival") + c.dim(": no page said which is the copy")
		}
		ev = append(ev, c.fit(w-4, c.styles.Label.Render("original ")+c.styles.Value.Render(strings.TrimPrefix(orig, "http://")),
			c.styles.Label.Render("copy ")+strings.TrimPrefix(cp, "http://")))
	}
	pairs := c.fig(strconv.Itoa(r.Supports), "duplicate pairs")
	switch {
	case r.Supports == 1:
		pairs = c.fig("1", "duplicate pair")
	case r.Supports == 0 && r.Prior > 0:
		// Put in force from other hosts' proof once its canonical
		// spelling answered (dedup.Detector.FromPrior).
		pairs = c.styles.Label.Render("no pair") + c.dim(": its canonical URL answered first")
	}
	prior := ""
	if r.Prior > 0 {
		prior = c.fig(strconv.Itoa(r.Prior), "other hosts' rules as prior")
	}
	state := ""
	if r.Withdrawn {
		state = c.styles.Warn.Render("withdrawn")
		if r.Choice.Reversed {
			state = c.styles.Warn.Render("reversed")
		}
	}
	ev = append(ev, c.fit(w-4, why, pairs, prior, state))
	out := []string{"  " + cut(head, w-2)}
	for _, e := range ev {
		out = append(out, "    "+cut(e, w-4))
	}
	return out
}
