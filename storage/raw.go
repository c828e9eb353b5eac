package storage

import (
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"time"
)

// rawStmts runs the writer's statements on the driver's own connection
// (sql.Conn.Raw) rather than through database/sql, which for each call
// converts every argument, allocates a slice of them, and finds the
// statement of the transaction's connection: in the default `lidi bench
// crawl` database/sql's argument slices were ~8% of the crawl's
// allocations. Each driver statement is prepared once, from the text of
// the *sql.Stmt it stands for, on the writer's one connection.
//
// The zero value holds no statements. A rawStmts is not safe for
// concurrent use: the DB's mu guards it, as it does the connection.
type rawStmts struct {
	text  map[*sql.Stmt]string // each statement's SQL: statements.text
	conn  driver.Conn          // the connection stmts are prepared on
	stmts map[*sql.Stmt]driver.Stmt
	args  []driver.NamedValue
	dest  []driver.Value
}

// on returns r for the driver connection ci (what sql.Conn.Raw hands its
// function), forgetting statements prepared on another: database/sql
// replaces a connection only after it failed, and by then it has closed
// it, so they cannot be finalized (the driver's Close freed what they
// need) and SQLite keeps the old connection, a zombie, until the process
// ends. No call runs the writer's statements under a context that can be
// cancelled (Head, SetMeta, Write: bg), which is what made database/sql
// replace it; TestCancelledCallsKeepTheWriter.
func (r *rawStmts) on(ci any) (*rawStmts, error) {
	c, ok := ci.(driver.Conn)
	if !ok {
		return nil, fmt.Errorf("driver connection %T", ci)
	}
	if c != r.conn {
		r.conn, r.stmts = c, map[*sql.Stmt]driver.Stmt{}
	}
	return r, nil
}

// stmt returns the driver statement standing for s.
func (r *rawStmts) stmt(s *sql.Stmt) (driver.Stmt, error) {
	if ds, ok := r.stmts[s]; ok {
		return ds, nil
	}
	text, ok := r.text[s]
	if !ok {
		return nil, errors.New("statement not prepared by the store")
	}
	ds, err := r.conn.Prepare(text)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", firstLine(text), err)
	}
	r.stmts[s] = ds
	return ds, nil
}

// named sets r.args to args as the driver takes them: the values
// database/sql would convert them to.
func (r *rawStmts) named(args []any) error {
	r.args = r.args[:0]
	for i, v := range args {
		switch v.(type) {
		case nil, int64, float64, bool, []byte, string, time.Time:
		default:
			dv, err := driver.DefaultParameterConverter.ConvertValue(v)
			if err != nil {
				return fmt.Errorf("argument %d: %w", i+1, err)
			}
			v = dv
		}
		r.args = append(r.args, driver.NamedValue{Ordinal: i + 1, Value: v})
	}
	return nil
}

// exec runs s with args.
func (r *rawStmts) exec(s *sql.Stmt, args []any) (driver.Result, error) {
	ds, err := r.stmt(s)
	if err != nil {
		return nil, err
	}
	if err := r.named(args); err != nil {
		return nil, err
	}
	defer clear(r.args) // let the GC have the values
	return ds.(driver.StmtExecContext).ExecContext(bg, r.args)
}

// queryRow runs s with args and scans its first row into dest, each an
// *int64, *bool or *sql.NullInt64; sql.ErrNoRows when there is none.
// Other rows are left unread: SQLite makes a RETURNING statement's
// changes at its first step, and closing the rows resets the statement.
func (r *rawStmts) queryRow(s *sql.Stmt, args []any, dest ...any) (err error) {
	ds, err := r.stmt(s)
	if err != nil {
		return err
	}
	if err := r.named(args); err != nil {
		return err
	}
	defer clear(r.args)
	rows, err := ds.(driver.StmtQueryContext).QueryContext(bg, r.args)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := rows.Close(); err == nil {
			err = cerr
		}
	}()
	if n := len(rows.Columns()); n != len(dest) {
		return fmt.Errorf("%d columns scanned into %d values", n, len(dest))
	}
	if cap(r.dest) < len(dest) {
		r.dest = make([]driver.Value, len(dest))
	}
	r.dest = r.dest[:len(dest)]
	defer clear(r.dest)
	if err := rows.Next(r.dest); err != nil {
		if errors.Is(err, io.EOF) {
			return sql.ErrNoRows
		}
		return err
	}
	for i, d := range dest {
		var v sql.NullInt64
		if err := v.Scan(r.dest[i]); err != nil {
			return fmt.Errorf("column %d: %w", i, err)
		}
		switch d := d.(type) {
		case *sql.NullInt64:
			*d = v
		case *int64:
			if !v.Valid {
				return fmt.Errorf("column %d: NULL", i)
			}
			*d = v.Int64
		case *bool:
			if !v.Valid {
				return fmt.Errorf("column %d: NULL", i)
			}
			*d = v.Int64 != 0
		default:
			return fmt.Errorf("column %d: cannot scan into %T", i, d)
		}
	}
	return nil
}

// close closes the statements, on the connection they were prepared on
// (ci, from sql.Conn.Raw): SQLite keeps a connection with statements left
// open, and its file, until they are.
func (r *rawStmts) close(ci any) error {
	var errs []error
	if c, ok := ci.(driver.Conn); ok && c == r.conn {
		for _, ds := range r.stmts {
			errs = append(errs, ds.Close())
		}
	}
	r.conn, r.stmts = nil, nil
	return errors.Join(errs...)
}
