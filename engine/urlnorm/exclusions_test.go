package urlnorm

// Conformance cases on which lidi's documented rules intentionally differ
// from the source project's, with the reason. runConformance fails if a case
// listed here passes, or if a case not listed here fails.

// Reasons, per rule category.
const (
	whySlashes     = "lidi keeps repeated slashes: /a//b and /a/b can be different resources"
	whyNoScheme    = "lidi needs a scheme or a base URL: a bare host name is a relative reference (ErrRelative)"
	whySorted      = "lidi keeps query order by default; the case passes with SortQuery (checked by the test)"
	whySortWhole   = "urlcanon sorts whole parameters; lidi (even with SortQuery) sorts by name and keeps the order of equal names, which can matter to the server"
	whyEmptyValue  = "lidi keeps 'b=' and '=v' parameters as written; only empty '&&' pairs are removed"
	whyUserinfo    = "lidi keeps userinfo; urlcanon drops it"
	whyNoDecode    = "lidi never decodes reserved characters, '%25' or anything twice; urlcanon decodes them, repeatedly"
	whyDotHost     = "a host made of dots is not a DNS name: lidi rejects it (ErrHost); urlcanon maps it to 0.0.0.0, an old URL Standard rule"
	whyOctal09     = "the current URL Standard parses \"09\" as an invalid IPv4 number (failure); urlcanon keeps it as a name"
	whyWWW         = "urlcanon aggressive strips www/wwwN prefixes from hosts; lidi keeps the host"
	whyHTTPS       = "urlcanon aggressive rewrites https to http; lidi keeps the scheme"
	whyASPSession  = "urlcanon aggressive removes ASP.NET cookieless session segments such as /(S(...))/ ; lidi does not"
	whyLowerPath   = "urlcanon aggressive lower-cases the path and query; lidi keeps their case"
	whyTrailing    = "urlcanon aggressive drops a path's trailing slash; lidi keeps it"
	whyIDNA        = "x/net/idna v0.62 rejects this punycode label (its decoded form is not in UTS #46 mapped form); the URL Standard now accepts it"
	whyEmptyACE    = "\"xn--\" decodes to an empty label: lidi rejects the host; the URL Standard accepts it"
	whyDotsNumber  = "lidi drops trailing dots, and \"foo.09\" then ends in a number that is no IPv4 address (ErrHost); the URL Standard keeps \"foo.09..\" as a name"
	whyQuoteQuery  = "the URL Standard percent-encodes ' in http(s) queries; lidi leaves sub-delims as written"
	whyMixedRules  = "several of the urlcanon aggressive rules above at once"
	whyAggrQuery   = "urlcanon aggressive sorts the query and lower-cases parameter names; lidi keeps both"
	whyJSessionEnd = "lidi removes the ;jsessionid= path parameter but keeps the trailing slash (urlcanon aggressive also drops the slash)"
)

var crawlerCommonsNormalizeExcluded = map[string]string{
	"http://foo.com//aa/bb/foo.html":         whySlashes,
	"http://foo.com/aa//bb/foo.html":         whySlashes,
	"http://foo.com/aa/bb//foo.html":         whySlashes,
	"http://foo.com//aa//bb//foo.html":       whySlashes,
	"http://foo.com////aa////bb//foo.html":   whySlashes,
	"http://foo.com////aa////bb////foo.html": whySlashes,
	"foo.com/index.html":                     whyNoScheme,
	"http://example.com/?b=1&a=1":            whySorted,
	"http://foo.com/foo.html?b=1&a=1":        whySorted,
	"http://foo.com/index?b=2&a=1":           whySorted,
	"http://foo.com/index?b=2&a=1#c":         whySorted,
	"http://foo.com/index?b=1&a=1&":          whySorted,
	"http://foo.com/index?&b=1&a=1":          whySorted,
	"http://foo.com/index?a=1&b=":            whyEmptyValue,
	"http://foo.com/index?b&a=1":             whySorted,
	"http://foo.com/index?b=&a=1":            whyEmptyValue,
	"http://foo.com/index?&=1&a=1":           whyEmptyValue,
	"http://foo.com/index?=1&b=1&a=1":        whyEmptyValue,
}

var crawlerCommonsResolveExcluded = map[string]string{}

var urlcanonSemanticExcluded = map[string]string{
	"%20leadingspace.com/":                       whyNoScheme,
	"www.google.com":                             whyNoScheme,
	"www.google.com/":                            whyNoScheme,
	"http:%2e%2e%2e/a/b":                         whyDotHost,
	"http:%2e%2e/a/b":                            whyDotHost,
	"http:%2e/a/b":                               whyDotHost,
	"http:/%2e%2e%2e/a/b":                        whyDotHost,
	"http:/%2e%2e/a/b":                           whyDotHost,
	"http:/%2e/a/b":                              whyDotHost,
	"http://%2e%2e%2e/a/b":                       whyDotHost,
	"http://%2e%2e/a/b":                          whyDotHost,
	"http://%2e/a/b":                             whyDotHost,
	"http:///%2e%2e%2e/a/b":                      whyDotHost,
	"http:///%2e%2e/a/b":                         whyDotHost,
	"http:///%2e/a/b":                            whyDotHost,
	"http://09/":                                 whyOctal09,
	"http://%25DOMAIN:foobar@foodomain.com/":     whyUserinfo,
	"http://:b@www.example.com":                  whyUserinfo,
	"http://@:@@host/a/b":                        whyUserinfo,
	"http://@@host/a/b":                          whyUserinfo,
	"http://@ho@st/a/b":                          whyUserinfo,
	"http://a:@www.example.com":                  whyUserinfo,
	"http://a:b@www.example.com":                 whyUserinfo,
	"http://www.@pple.com":                       whyUserinfo,
	"http:/:b@www.example.com":                   whyUserinfo,
	"http:/a:@www.example.com":                   whyUserinfo,
	"http:/a:b@www.example.com":                  whyUserinfo,
	"http::b@www.example.com":                    whyUserinfo,
	"http:a:@www.example.com":                    whyUserinfo,
	"http:a:b@www.example.com":                   whyUserinfo,
	"https://test:@test":                         whyUserinfo,
	"http://example.com/%3A%3a%3C%3c":            whyNoDecode,
	"http://example.com/%7Ffp3%3Eju%3Dduvgw%3Dd": whyNoDecode,
	"http://example.com/(%28:%3A%29)":            whyNoDecode,
	"http://example.com/@asdf%40":                whyNoDecode,
	"http://host/%%%25%32%35asd%%":               whyNoDecode,
	"http://host/%%300":                          whyNoDecode,
	"http://host/%%36%31":                        whyNoDecode,
	"http://host/%25%2536%2531":                  whyNoDecode,
	"http://host/%25%25361":                      whyNoDecode,
	"http://host/%25%32%35":                      whyNoDecode,
	"http://host/%25%32%35%25%32%35":             whyNoDecode,
	"http://host/%2525252525252525":              whyNoDecode,
	"http://host/%2561":                          whyNoDecode,
	"http://host/?%%300":                         whyNoDecode,
	"http://host/?%%36%31":                       whyNoDecode,
	"http://host/?%25%2536%2531":                 whyNoDecode,
	"http://host/?%25%25361":                     whyNoDecode,
	"http://host/?%2561":                         whyNoDecode,
	"http://host/asdf%25%32%35asd":               whyNoDecode,
	"http://example.com/?%26=%26&%26":            whySortWhole,
	"http://example.com/?%3d=%3d&%3d":            whySortWhole,
	"http://example.com/?c=d&a=b":                whySorted,
	"http://example.com////../..":                whySlashes,
	"http://example.com\\\\foo\\\\bar":           whySlashes,
	"http://host.com//twoslashes?more//slashes":  whySlashes,
}

var urlcanonAggressiveExcluded = map[string]string{
	"  https://www.google.com/  ":       whyMixedRules,
	"https://foo.com/":                  whyHTTPS,
	"http://www.foo.com/":               whyWWW,
	"http://www.foo.com":                whyWWW,
	"http://www12.foo.com/":             whyWWW,
	"https://www12.foo.com/":            whyMixedRules,
	"www12.foo.com/":                    whyNoScheme,
	"http://www.example.com/":           whyWWW,
	"http://www.example.com":            whyWWW,
	"http://www.example.com/index.html": whyWWW,
	"foo.com/":                          whyNoScheme,
	"foo.com":                           whyNoScheme,
	"www12.foo.com":                     whyNoScheme,
	"foo.com/boo":                       whyNoScheme,
	"foo.com//goo":                      whyNoScheme,
	"foo.com///goo":                     whyNoScheme,
	"foo.com/b?jar=//goo":               whyNoScheme,
	"foo.com///goo/":                    whyNoScheme,
	"foo.com/pa!th":                     whyNoScheme,
	"foo.com/pa+th":                     whyNoScheme,
	"foo.com/pa%21th":                   whyNoScheme,
	"foo.com/pa%th":                     whyNoScheme,
	"http://legislature.mi.gov/(S(4hqa0555fwsecu455xqckv45))/mileg.aspx":                                                                             whyASPSession,
	"http://legislature.mi.gov/(4hqa0555fwsecu455xqckv45)/mileg.aspx":                                                                                whyASPSession,
	"http://legislature.mi.gov/(a(4hqa0555fwsecu455xqckv45)S(4hqa0555fwsecu455xqckv45)f(4hqa0555fwsecu455xqckv45))/mileg.aspx?page=sessionschedules": whyASPSession,
	"http://www.flickr.com/photos/36050182@N05/":                                                                                                     whyMixedRules + " (www, lower-cased path, trailing slash)",
	"http://www.chub.org:80/foo":      whyWWW,
	"http://www.chub.org:8080/foo":    whyWWW,
	"http://www232.chub.org:8080/foo": whyWWW,
	"http://www.chub.org:443/foo":     whyWWW,
	"https://www.chub.org:443/foo":    whyMixedRules + " (www, https to http)",
	"http://example.com/something/;jsessionid=E85FAC04E331FFCA55549B10B7C7A4FA": whyJSessionEnd,
	"http://example.com/foo?c=5&&a=1&B=3&A=2&b=4&C=6&":                          whyAggrQuery,
}

var wptExcluded = map[string]string{
	"http://a.b.c.xn--pokxncvks":  whyIDNA,
	"http://10.0.0.xn--pokxncvks": whyIDNA,
	"http://a.b.c.XN--pokxncvks":  whyIDNA,
	"http://a.b.c.Xn--pokxncvks":  whyIDNA,
	"http://10.0.0.XN--pokxncvks": whyIDNA,
	"http://10.0.0.xN--pokxncvks": whyIDNA,
	"http://foo.09..":             whyDotsNumber,
	"https://xn--/":               whyEmptyACE,
	"http://host/?'":              whyQuoteQuery,
	"https://www.example.com/path{\x7fpath.html?query'\x7f=query#fragment<\x7ffragment": whyQuoteQuery,
}
