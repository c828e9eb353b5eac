package dedup

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// listing renders a shop's listing page at url showing items (each a
// link and a description) in the order given, with sort links to itself,
// and returns the Page the crawler gives the detector.
func listing(url string, items []int, g *textGen) Page {
	var b strings.Builder
	var links []string
	path, _, _ := strings.Cut(url, "?")
	b.WriteString("<html><head><title>Zapatos</title></head><body><h1>Zapatos</h1><p>")
	for _, o := range []string{"precio", "nombre", "fecha"} {
		fmt.Fprintf(&b, `<a href="%s?orden=%s">%s</a> `, path, o, o)
		links = append(links, path+"?orden="+o)
	}
	b.WriteString("</p><ul>")
	for _, it := range items {
		u := fmt.Sprintf("%s/item-%d.html", path, it)
		words := newTextGen(uint64(1000 + it)).text(12)
		fmt.Fprintf(&b, `<li><a href="%s">Item %d</a> %s</li>`, u, it, strings.Join(words, " "))
		links = append(links, u)
	}
	b.WriteString("</ul></body></html>")
	p := pageOf(url, []byte(b.String()))
	p.Items = ListingItems(url, slices.Values(links))
	return p
}

// Listing parameters that only sort the items a listing shows are
// learned from the set of links the listings hold, whatever their names;
// the page of a listing, which shows other items, never is.
func TestListingSortOrder(t *testing.T) {
	d := New(Config{})
	var rules []Rule
	for k, shop := range []string{"/zapatos", "/botas", "/sandalias", "/chanclas"} {
		base := "http://tienda.example" + shop
		first := make([]int, 12)
		for i := range first {
			first[i] = 100*k + i
		}
		second := make([]int, 12)
		for i := range second {
			second[i] = 100*k + 50 + i
		}
		byName := slices.Clone(first)
		slices.Reverse(byName)
		byDate := append(slices.Clone(first[6:]), first[:6]...)
		for _, p := range []Page{
			listing(base, first, nil),
			listing(base+"?pagina=2", second, nil),
			listing(base+"?orden=nombre", byName, nil),
			listing(base+"?orden=fecha", byDate, nil),
		} {
			dec := d.Observe(p)
			rules = append(rules, dec.Learned...)
			if strings.Contains(p.URL, "orden") && dec.Kind == Unique && len(rules) == 0 {
				t.Errorf("%s: unique, want a listing of the same items", p.URL)
			}
			if strings.Contains(p.URL, "pagina") && dec.Kind != Unique {
				t.Errorf("%s: %v of %s, want unique", p.URL, dec.Kind, dec.OfURL)
			}
		}
	}
	if len(rules) != 1 || rules[0].Kind != DropParam || rules[0].Name != "orden" {
		t.Fatalf("learned %v, want drop ?orden", rules)
	}
	if c, _, _ := d.Canonical("http://tienda.example/zuecos?orden=precio&pagina=3"); c != "http://tienda.example/zuecos?pagina=3" {
		t.Errorf("Canonical = %s: want the page kept, the order dropped", c)
	}
	if ListingItems("http://x.test/a", slices.Values([]string{"http://x.test/a?s=1", "http://x.test/b"})) != 0 {
		t.Error("a page of two links is a listing")
	}
}

// With a prior of the kind from other shops, one pair of listings of the
// same items under a parameter no shop named drops it whatever its value
// (another order is another value); the page of a listing is kept.
func TestListingPriorOneOrder(t *testing.T) {
	d := New(Config{})
	shop := func(origin, param string, k int) []Rule {
		var rules []Rule
		for j, cat := range []string{"/zapatos", "/botas", "/sandalias"} {
			base := origin + cat
			first := make([]int, 12)
			for i := range first {
				first[i] = 1000*k + 100*j + i
			}
			byName := slices.Clone(first)
			slices.Reverse(byName)
			byDate := append(slices.Clone(first[6:]), first[:6]...)
			for _, p := range []Page{listing(base, first, nil), listing(base+"?"+param+"=nombre", byName, nil), listing(base+"?"+param+"=fecha", byDate, nil)} {
				rules = append(rules, d.Observe(p).Learned...)
			}
		}
		return rules
	}
	for k, param := range []string{"orden", "sortierung", "tri"} {
		if rs := shop(fmt.Sprintf("http://tienda%d.example", k), param, k); len(rs) == 0 {
			t.Fatalf("shop %d: learned nothing of ?%s", k, param)
		}
	}
	checkOneOrderPair(t, d, "http://cuarta.example")
}

// checkOneOrderPair observes one pair of listings of the same items on
// origin, under ?ordenar=nombre, and checks that d drops ?ordenar from it
// whatever its value, and keeps the page parameter.
func checkOneOrderPair(t *testing.T, d *Detector, origin string) {
	t.Helper()
	base := origin + "/zapatos"
	first := []int{9001, 9002, 9003, 9004, 9005, 9006, 9007, 9008}
	byName := slices.Clone(first)
	slices.Reverse(byName)
	var rules []Rule
	for _, p := range []Page{listing(base, first, nil), listing(base+"?ordenar=nombre", byName, nil)} {
		rules = append(rules, d.Observe(p).Learned...)
	}
	if len(rules) == 0 || rules[0].Kind != DropParam || rules[0].Name != "ordenar" || rules[0].Supports != 1 {
		t.Fatalf("learned %v from one pair of listings of the same items, want drop ?ordenar whatever its value", rules)
	}
	if c, _, _ := d.Canonical(origin + "/botas?ordenar=fecha&pagina=2"); c != origin+"/botas?pagina=2" {
		t.Errorf("Canonical = %s: want the order dropped, whatever its value, and the page kept", c)
	}
}

// Hosts that dropped a parameter with its one value (a printer-friendly
// ?imprimir=si) vouch for a listing's order parameter on the next host as
// well: one pair of listings of the same items drops it whatever its
// value. Which of the two a host's rule was depends on the values its
// pairs happened to show.
func TestListingPriorFromValueRules(t *testing.T) {
	d := New(Config{})
	printValueRules(t, d)
	checkOneOrderPair(t, d, "http://tienda.example")
}

// printValueRules has three hosts of d each learn a printer-friendly
// parameter dropped with its one value: a prior of parameters in force.
func printValueRules(t *testing.T, d *Detector) {
	t.Helper()
	for k, nv := range []string{"imprimir=si", "druck=1", "printable=yes"} {
		w := newWeb(fmt.Sprintf("http://diario%d.example", k), uint64(400+k))
		var fs []fetch
		for i, p := range []string{"/a.html", "/b/c.html", "/d/"} {
			fs = append(fs, w.page(p, uint64(i), pageOpt{}), w.page(p+"?"+nv, uint64(i), pageOpt{}))
		}
		for _, r := range learned(crawl(d, fs)) {
			if r.Kind != DropParamValue {
				t.Fatalf("host %d learned %v, want its parameter dropped with its value", k, r.String())
			}
		}
	}
}

// A listing the same as another but for a parameter's value says that
// value is the default (?pagina=1 is the first page), nothing of the
// others: with a prior of parameters in force, one such pair drops that
// value only, and ?pagina=7 is still fetched.
func TestListingPriorNotFromDefaultValue(t *testing.T) {
	d := New(Config{})
	printValueRules(t, d)
	base := "http://tienda.example/zapatos"
	first := []int{9001, 9002, 9003, 9004, 9005, 9006, 9007, 9008}
	for _, p := range []Page{listing(base, first, nil), listing(base+"?pagina=1", first, nil)} {
		d.Observe(p)
	}
	if _, by, covered := d.Canonical(base + "?pagina=7"); covered {
		t.Errorf("?pagina=7 covered by %v: one pair of the same listing under ?pagina=1 says nothing of page 7", by)
	}
}
