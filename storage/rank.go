package storage

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
)

// FetchedLinks calls fn for every fetched page with its URL and the IDs of
// the links it had (as stored: each target once), so a resumed crawl
// rebuilds the graph its PageRank runs on. A page whose links are held for
// a probe (Held) is left out: the crawl adds it when the probe answers.
// links is reused between calls. It reads through the read-only pool.
//
// Pages come in the order their rows are stored (the order URLs were
// found), not by ID: asking for ID order walks the ID index and looks up
// every row of urls at a random place, five to ten times slower at a
// resume, and on a file larger than memory a disk read a URL.
func (db *DB) FetchedLinks(ctx context.Context, fn func(page uint64, url string, links []uint64)) error {
	if db.closed.Load() {
		return ErrClosed
	}
	rows, err := db.r.QueryContext(ctx, sqlFetchedLinks)
	if err != nil {
		return fmt.Errorf("storage: fetched links: %w", err)
	}
	defer rows.Close()
	var links []uint64
	for rows.Next() {
		var id int64
		var u, ids sql.RawBytes
		if err := rows.Scan(&id, &u, &ids); err != nil {
			return fmt.Errorf("storage: fetched links: %w", err)
		}
		if links, err = appendLinkIDs(links[:0], ids); err != nil {
			return fmt.Errorf("storage: fetched links of %016x: %w", uint64(id), err)
		}
		fn(uint64(id), string(u), links)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("storage: fetched links: %w", err)
	}
	return nil
}

const sqlFetchedLinks = `SELECT u.id, u.url, p.to_ids FROM urls AS u
	LEFT JOIN page_links AS p ON p.id = u.links_id
	WHERE u.state = 1 AND u.id NOT IN (SELECT url_id FROM held_links)`

// appendLinkIDs appends the IDs of page_links.to_ids, a JSON array of
// integers (empty for NULL: a page without links), to dst.
func appendLinkIDs(dst []uint64, js []byte) ([]uint64, error) {
	s := strings.TrimSpace(string(js))
	if s == "" {
		return dst, nil
	}
	if len(s) < 2 || s[0] != '[' || s[len(s)-1] != ']' {
		return dst, fmt.Errorf("links %.40q: not a JSON array", s)
	}
	for f := range strings.SplitSeq(s[1:len(s)-1], ",") {
		if f = strings.TrimSpace(f); f == "" && len(s) == 2 {
			break
		}
		v, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return dst, fmt.Errorf("links %.40q: %w", s, err)
		}
		dst = append(dst, uint64(v))
	}
	return dst, nil
}
