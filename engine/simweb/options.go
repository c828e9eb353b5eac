package simweb

import (
	"flag"
	"fmt"
	"math"
	"strconv"
	"time"
)

// Defaults applied by Generate to zero Options fields.
const (
	DefaultSites          = 1000
	DefaultPagesPerSite   = 50
	DefaultSiteSizeAlpha  = 1.2
	DefaultLinksPerPage   = 10.0
	DefaultExternalLinks  = 0.10
	DefaultPageSizeMedian = 12 << 10
	DefaultPageSizeSigma  = 0.9
	DefaultSitesPerAddr   = 4
	DefaultMaxAddresses   = 1024
	DefaultLatencySigma   = 0.5
	DefaultBandwidthSigma = 0.7
)

// Options describe a synthetic web. The zero value is a valid description:
// every zero field takes the documented default, and the default web has
// 1000 sites, 50,000 pages and serves as fast as it can.
//
// Options is a plain value; Generate does not retain or modify it.
type Options struct {
	// Seed selects the web: the same Options give the same web, byte for
	// byte, on every run and platform.
	Seed int64

	// Sites is the number of sites (hosts). Zero means DefaultSites.
	Sites int
	// Pages is the total number of pages, spread over the sites with a
	// heavy-tailed (Pareto) size distribution and at least one page per
	// site. Zero means Sites*DefaultPagesPerSite.
	Pages int
	// SiteSizeAlpha is the Pareto tail index of site sizes; smaller is more
	// skewed. Zero means DefaultSiteSizeAlpha (1.2: a few sites with
	// thousands of pages, most with a handful).
	SiteSizeAlpha float64

	// LinksPerPage is the mean number of content links per page, on top of
	// the navigation links (home, parent directory, directory listings).
	// Zero means DefaultLinksPerPage.
	LinksPerPage float64
	// ExternalLinks is the target fraction of all links that point to
	// another site. Zero means DefaultExternalLinks (0.10); negative means
	// no external links beyond the few that keep every site reachable.
	ExternalLinks float64

	// PageSizeMedian is the median size of a page's HTML in bytes; sizes are
	// lognormal with log standard deviation PageSizeSigma, clamped to
	// [1 KiB, 1 MiB]. Zeros mean DefaultPageSizeMedian (12 KiB) and
	// DefaultPageSizeSigma (0.9, so most pages lie between 2 KB and 100 KB
	// and a few reach several hundred KB).
	PageSizeMedian int
	PageSizeSigma  float64

	// Addresses is the number of distinct loopback addresses the sites are
	// spread over (several sites share an address, as with shared hosting).
	// Zero means one per DefaultSitesPerAddr sites, at most
	// DefaultMaxAddresses. The server opens one listening socket per
	// address in use.
	Addresses int

	// LatencyMedian is the median time a site takes before it answers a
	// request; each site's latency is drawn once, lognormal around it with
	// log standard deviation LatencySigma. Zero means no latency; a zero
	// LatencySigma means DefaultLatencySigma, a negative one gives every
	// site exactly the median.
	LatencyMedian time.Duration
	LatencySigma  float64
	// BandwidthMedian is the median rate, in bytes per second, at which a
	// site sends a response body; drawn per site like the latency. Zero
	// means unlimited.
	BandwidthMedian int64
	BandwidthSigma  float64
	// ErrorRate is the fraction of page requests each site answers with a
	// 500 or 503 instead of the page. Zero means none.
	ErrorRate float64

	// Traps is the number of sites that get each kind of crawler trap (host
	// and directory mirrors, loops, an endless calendar, session ids,
	// tracking parameters, soft 404s, printer-friendly copies, binary files
	// served as HTML, HTML served as application/octet-stream, a directory
	// chain deeper than ten levels); see TrapKind and Web.Truth. A site may
	// get several kinds. Zero means no traps, and the web is then byte for
	// byte what it was before traps existed. DefaultTrapSites is what the
	// --traps flag sets on its own.
	Traps int

	// Change makes pages change over time; its zero value is a web whose
	// pages never change. See ChangeOptions and Web.Changes.
	Change ChangeOptions

	// TLS makes the web an HTTPS web: its links are https:// URLs, the
	// server answers them over TLS with a certificate per host signed by
	// its own CA (Server.CA), and plain HTTP requests are redirected to
	// them with 301, as sites that moved to HTTPS do. False: HTTP only.
	TLS bool
}

// DefaultTrapSites is the number of sites per trap kind that "--traps"
// without a value asks for.
const DefaultTrapSites = 4

// withDefaults returns o with every zero field replaced by its default.
func (o Options) withDefaults() Options {
	if o.Sites == 0 {
		o.Sites = DefaultSites
	}
	if o.Pages == 0 {
		o.Pages = o.Sites * DefaultPagesPerSite
	}
	if o.SiteSizeAlpha == 0 {
		o.SiteSizeAlpha = DefaultSiteSizeAlpha
	}
	if o.LinksPerPage == 0 {
		o.LinksPerPage = DefaultLinksPerPage
	}
	if o.ExternalLinks == 0 {
		o.ExternalLinks = DefaultExternalLinks
	}
	if o.ExternalLinks < 0 {
		o.ExternalLinks = 0
	}
	if o.PageSizeMedian == 0 {
		o.PageSizeMedian = DefaultPageSizeMedian
	}
	if o.PageSizeSigma == 0 {
		o.PageSizeSigma = DefaultPageSizeSigma
	}
	if o.Addresses == 0 {
		o.Addresses = min((o.Sites+DefaultSitesPerAddr-1)/DefaultSitesPerAddr, DefaultMaxAddresses)
	}
	if o.LatencySigma == 0 {
		o.LatencySigma = DefaultLatencySigma
	}
	if o.BandwidthSigma == 0 {
		o.BandwidthSigma = DefaultBandwidthSigma
	}
	return o
}

// maxAddresses is how many distinct addresses fit in 127.1.0.0-127.255.x.x
// when .0 and .255 are skipped in the last octet.
const maxAddresses = 254 * 256 * 254

func (o Options) validate() error {
	switch {
	case o.Sites < 1 || o.Sites > 1<<24:
		return fmt.Errorf("simweb: sites %d outside [1, %d]", o.Sites, 1<<24)
	case o.Pages < o.Sites:
		return fmt.Errorf("simweb: %d pages for %d sites: need at least one page per site", o.Pages, o.Sites)
	case o.Pages > math.MaxInt32-1:
		return fmt.Errorf("simweb: %d pages exceed the int32 page ids", o.Pages)
	case !(o.SiteSizeAlpha > 0):
		return fmt.Errorf("simweb: site size alpha %v not positive", o.SiteSizeAlpha)
	case !(o.LinksPerPage > 0) || o.LinksPerPage > 1000:
		return fmt.Errorf("simweb: links per page %v outside (0, 1000]", o.LinksPerPage)
	case !(o.ExternalLinks >= 0 && o.ExternalLinks < 1):
		return fmt.Errorf("simweb: external link fraction %v outside [0, 1)", o.ExternalLinks)
	case o.PageSizeMedian < 256 || o.PageSizeMedian > 1<<20:
		return fmt.Errorf("simweb: page size median %d outside [256, 1 MiB]", o.PageSizeMedian)
	case !(o.PageSizeSigma >= 0) || o.PageSizeSigma > 5:
		return fmt.Errorf("simweb: page size sigma %v outside [0, 5]", o.PageSizeSigma)
	case o.Addresses < 1 || o.Addresses > maxAddresses:
		return fmt.Errorf("simweb: addresses %d outside [1, %d]", o.Addresses, maxAddresses)
	case o.LatencyMedian < 0 || o.LatencyMedian > time.Minute:
		return fmt.Errorf("simweb: latency %v outside [0, 1m]", o.LatencyMedian)
	case o.BandwidthMedian < 0:
		return fmt.Errorf("simweb: negative bandwidth %d", o.BandwidthMedian)
	case !(o.ErrorRate >= 0 && o.ErrorRate <= 1):
		return fmt.Errorf("simweb: error rate %v outside [0, 1]", o.ErrorRate)
	case o.Traps < 0 || o.Traps > o.Sites:
		return fmt.Errorf("simweb: %d trap sites per kind outside [0, %d sites]", o.Traps, o.Sites)
	}
	return nil
}

// RegisterFlags defines command-line flags that set o's fields, with o's
// current values as the flags' defaults.
func (o *Options) RegisterFlags(fs *flag.FlagSet) {
	fs.Int64Var(&o.Seed, "seed", o.Seed, "seed that selects the synthetic web")
	fs.IntVar(&o.Sites, "sites", o.Sites, "number of sites (0 = 1000)")
	fs.IntVar(&o.Pages, "pages", o.Pages, "total number of pages (0 = 50 per site)")
	fs.Float64Var(&o.SiteSizeAlpha, "site-size-alpha", o.SiteSizeAlpha, "Pareto tail index of site sizes (0 = 1.2)")
	fs.Float64Var(&o.LinksPerPage, "links", o.LinksPerPage, "mean content links per page (0 = 10)")
	fs.Float64Var(&o.ExternalLinks, "external", o.ExternalLinks, "fraction of links to other sites (0 = 0.1, negative = none)")
	fs.IntVar(&o.PageSizeMedian, "page-size", o.PageSizeMedian, "median page size in `bytes` (0 = 12288)")
	fs.Float64Var(&o.PageSizeSigma, "page-size-sigma", o.PageSizeSigma, "log standard deviation of page sizes (0 = 0.9)")
	fs.IntVar(&o.Addresses, "addresses", o.Addresses, "distinct loopback addresses (0 = one per 4 sites, at most 1024)")
	fs.DurationVar(&o.LatencyMedian, "latency", o.LatencyMedian, "median per-site response latency (0 = none)")
	fs.Float64Var(&o.LatencySigma, "latency-sigma", o.LatencySigma, "log standard deviation of site latencies (0 = 0.5, negative = none)")
	fs.Int64Var(&o.BandwidthMedian, "bandwidth", o.BandwidthMedian, "median per-site bandwidth in `bytes/s` (0 = unlimited)")
	fs.Float64Var(&o.BandwidthSigma, "bandwidth-sigma", o.BandwidthSigma, "log standard deviation of site bandwidths (0 = 0.7, negative = none)")
	fs.Float64Var(&o.ErrorRate, "error-rate", o.ErrorRate, "fraction of page requests answered with 5xx")
	fs.BoolVar(&o.TLS, "tls", o.TLS, "serve the web over HTTPS (links are https://; plain HTTP answers 301 to HTTPS)")
	fs.Var(trapsFlag{&o.Traps}, "traps", "add crawler traps with ground truth: --traps for "+strconv.Itoa(DefaultTrapSites)+" sites per trap kind, --traps=N for N")
	o.Change.RegisterFlags(fs)
}

// trapsFlag is the --traps flag: a boolean flag ("--traps" alone means
// DefaultTrapSites sites per kind) that also takes a count ("--traps=7").
type trapsFlag struct{ n *int }

func (f trapsFlag) String() string {
	if f.n == nil {
		return "0"
	}
	return strconv.Itoa(*f.n)
}

func (f trapsFlag) Set(s string) error {
	switch s {
	case "true":
		*f.n = DefaultTrapSites
		return nil
	case "false":
		*f.n = 0
		return nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return fmt.Errorf("simweb: --traps=%q: want a number of sites per trap kind", s)
	}
	*f.n = n
	return nil
}

func (f trapsFlag) IsBoolFlag() bool { return true }
