package simweb

import "flag"

// WebFlags registers --sites, --pages and --seed, the size and the seed
// (1) of a synthetic web, which every command that makes one takes: each
// command gives its own size.
func WebFlags(fs *flag.FlagSet, sites *int, defSites int, pages *int, defPages int, seed *int64) {
	fs.IntVar(sites, "sites", defSites, "sites in the synthetic web")
	fs.IntVar(pages, "pages", defPages, "pages in the synthetic web")
	fs.Int64Var(seed, "seed", 1, "the synthetic web's seed")
}
