package seen

// CrawlLookups is crawlLookups, for the tests of package seen_test (which
// may import packages that import seen).
var CrawlLookups = crawlLookups
