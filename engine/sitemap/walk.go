package sitemap

import (
	"context"
	"errors"
	"io"
	"slices"
)

// Bounds of a walk through sitemap indexes; [Walker] fields default to
// them.
const (
	// MaxIndexDepth is how many levels of index files a walk reads above
	// a urlset. The protocol lets an index list only sitemaps; sites do
	// nest indexes, so one index of indexes is read, and no deeper.
	MaxIndexDepth = 2
	// MaxFiles bounds the files one walk reads (a site's index may list
	// 50,000 sitemaps of 50,000 URLs each: more than a crawl wants from
	// one site at once).
	MaxFiles = 1000
)

// ErrIndexTooDeep refuses an index nested deeper than Walker.MaxIndexDepth.
var ErrIndexTooDeep = errors.New("sitemap: sitemap index nested too deep")

// Walker reads a sitemap and, when it is an index, the sitemaps it lists,
// depth first, each file once. Set Open; the other fields default to the
// package constants. A Walker is safe for concurrent use if Open is.
type Walker struct {
	// Fetch fetches a sitemap and calls read, once, with its URL after
	// any redirect and its body as it arrives; it returns read's error,
	// or why the file could not be fetched (then without calling read).
	// Either is recorded for that file and the walk goes on.
	Fetch func(ctx context.Context, url string, read func(final string, body io.Reader) error) error

	Limits        Limits
	MaxIndexDepth int
	MaxFiles      int
}

// FileResult is one file of a walk: where it is, at which level of
// indexes (0 for the first), what was in it and why it was refused, if it
// was.
type FileResult struct {
	URL   string // as listed (or the walk's first URL)
	Final string // after redirects; "" when it could not be fetched
	Depth int
	Stats Stats
	// NotWalked counts an index's sitemaps left out: listed twice, or
	// past Walker.MaxFiles.
	NotWalked int
	Err       error
}

// Walk reads root and the sitemaps its indexes list, calling yield for
// every page entry (the entries of urlset and text files; an index's
// entries are walked, not yielded). It returns one FileResult per file
// tried, in order; the error is yield's or ctx's, which end the walk.
func (w *Walker) Walk(ctx context.Context, root Source, yield func(Entry) error) ([]FileResult, error) {
	maxDepth := w.MaxIndexDepth
	if maxDepth <= 0 {
		maxDepth = MaxIndexDepth
	}
	maxFiles := w.MaxFiles
	if maxFiles <= 0 {
		maxFiles = MaxFiles
	}
	type todo struct {
		src   Source
		depth int
	}
	stack := []todo{{root, 0}}
	seen := map[string]bool{root.URL: true}
	var files []FileResult
	for len(stack) > 0 && len(files) < maxFiles {
		if err := ctx.Err(); err != nil {
			return files, err
		}
		t := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		fr := FileResult{URL: t.src.URL, Depth: t.depth}
		var children []todo
		var yerr error
		err := w.Fetch(ctx, t.src.URL, func(final string, body io.Reader) error {
			fr.Final = final
			seen[final] = true
			src := Source{URL: final, Vouchers: t.src.Vouchers}
			// An index's sitemaps may list what the index's directory
			// holds, and what its vouchers vouch for.
			childVouchers := append(slices.Clone(t.src.Vouchers), final)
			return read(body, src, w.Limits, &fr.Stats, func(e Entry) error {
				if fr.Stats.Kind != KindIndex {
					yerr = yield(e)
					return yerr
				}
				switch {
				case t.depth >= maxDepth:
					return ErrIndexTooDeep
				case seen[e.URL] || len(files)+1+len(stack)+len(children) >= maxFiles:
					fr.NotWalked++
					return nil
				}
				seen[e.URL] = true
				children = append(children, todo{Source{URL: e.URL, Vouchers: childVouchers}, t.depth + 1})
				return nil
			})
		})
		if yerr != nil {
			return append(files, fr), yerr
		}
		if errors.Is(err, ErrIndexTooDeep) {
			err = &FileError{URL: fr.Final, Err: err}
		}
		fr.Err = err
		files = append(files, fr)
		// Depth first, in file order.
		for i := len(children) - 1; i >= 0; i-- {
			stack = append(stack, children[i])
		}
	}
	return files, nil
}
