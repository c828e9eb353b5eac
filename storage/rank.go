package storage

import (
	"context"
	"database/sql"
	"fmt"
)

// FetchedLinks calls fn for every fetched page with its URL and the IDs of
// the links it had (as stored: each target once), so a resumed crawl
// rebuilds the graph its PageRank runs on. A page whose links are held for
// a probe (Held) is left out: the crawl adds it when the probe answers.
// links is reused between calls. It reads through the read-only pool.
func (db *DB) FetchedLinks(ctx context.Context, fn func(page uint64, url string, links []uint64)) error {
	if db.closed.Load() {
		return ErrClosed
	}
	rows, err := db.r.QueryContext(ctx, `SELECT u.id, u.url, l.to_id FROM urls AS u
	LEFT JOIN links AS l ON l.from_id = u.id
	WHERE u.state = 1 AND u.id NOT IN (SELECT url_id FROM held_links) ORDER BY u.id`)
	if err != nil {
		return fmt.Errorf("storage: fetched links: %w", err)
	}
	defer rows.Close()
	var (
		cur   int64
		url   string
		links []uint64
		any   bool
	)
	for rows.Next() {
		var id int64
		var u sql.RawBytes // copied only for a new page
		var to sql.NullInt64
		if err := rows.Scan(&id, &u, &to); err != nil {
			return fmt.Errorf("storage: fetched links: %w", err)
		}
		if !any || id != cur {
			if any {
				fn(uint64(cur), url, links)
			}
			cur, url, links, any = id, string(u), links[:0], true
		}
		if to.Valid {
			links = append(links, uint64(to.Int64))
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("storage: fetched links: %w", err)
	}
	if any {
		fn(uint64(cur), url, links)
	}
	return nil
}
