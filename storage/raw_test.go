package storage

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"math"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// rawStmts.named passes the driver what database/sql would: the driver's
// own types as they are, others converted, values that do not fit
// refused.
func TestRawNamedConverts(t *testing.T) {
	type kind string
	four := int64(4)
	now := time.Date(2026, 11, 28, 6, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		in      any
		want    driver.Value
		wantErr bool
	}{
		{nil, nil, false},
		{int64(-3), int64(-3), false},
		{2.5, 2.5, false},
		{true, true, false},
		{[]byte("body"), []byte("body"), false},
		{"text", "text", false},
		{now, now, false},
		{kind("mirror"), "mirror", false},
		{7, int64(7), false},
		{int32(-7), int64(-7), false},
		{uint64(math.MaxInt64), int64(math.MaxInt64), false},
		{uint64(math.MaxUint64), nil, true},
		{struct{}{}, nil, true},
		// What the writer passes besides (session 39's review): nullable
		// IDs, pointers, and a body that is nil (NULL) or empty (a blob).
		{sql.NullInt64{}, nil, false},
		{sql.NullInt64{Int64: 5, Valid: true}, int64(5), false},
		{(*int64)(nil), nil, false},
		{&four, int64(4), false},
		{[]byte(nil), []byte(nil), false},
		{[]byte{}, []byte{}, false},
	} {
		var r rawStmts
		err := r.named([]any{int64(1), c.in})
		if (err != nil) != c.wantErr {
			t.Errorf("%T %v: error %v, want one %v", c.in, c.in, err, c.wantErr)
			continue
		}
		if err != nil {
			continue
		}
		if len(r.args) != 2 || r.args[1].Ordinal != 2 || !reflect.DeepEqual(r.args[1].Value, c.want) {
			t.Errorf("%T %v: %+v, want ordinal 2 and %#v", c.in, c.in, r.args, c.want)
		}
		// database/sql's own conversion agrees.
		dv, derr := driver.DefaultParameterConverter.ConvertValue(c.in)
		if derr != nil || !reflect.DeepEqual(dv, c.want) {
			t.Errorf("%T %v: database/sql converts to %#v (%v), rawStmts to %#v", c.in, c.in, dv, derr, c.want)
		}
	}
}

// rawStmts.queryRow scans as Row.Scan does, and says sql.ErrNoRows for no
// row and refuses NULL where a value is needed.
func TestRawQueryRow(t *testing.T) {
	ctx := context.Background()
	db, err := sql.Open("sqlite", dsn(filepath.Join(t.TempDir(), "q.db"), "rwc"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	for _, q := range []string{
		"CREATE TABLE t (id INTEGER PRIMARY KEY, v INTEGER)",
		"INSERT INTO t VALUES (1, 10), (2, NULL), (3, 0)",
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	const q = "SELECT id, v, v, v FROM t WHERE id = ?"
	st, err := db.PrepareContext(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r := rawStmts{text: map[*sql.Stmt]string{st: q}}
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	type row struct {
		id, v int64
		null  sql.NullInt64
		b     bool
	}
	for _, c := range []struct {
		id      int64
		want    row
		wantErr error // nil, sql.ErrNoRows, or errAny
	}{
		{1, row{1, 10, sql.NullInt64{Int64: 10, Valid: true}, true}, nil},
		{3, row{3, 0, sql.NullInt64{Int64: 0, Valid: true}, false}, nil},
		{2, row{}, errAny},
		{4, row{}, sql.ErrNoRows},
	} {
		err := conn.Raw(func(ci any) error {
			rs, err := r.on(ci)
			if err != nil {
				return err
			}
			var got row
			err = rs.queryRow(st, []any{c.id}, &got.id, &got.v, &got.null, &got.b)
			if err == nil && got != c.want {
				t.Errorf("id %d: %+v, want %+v", c.id, got, c.want)
			}
			return err
		})
		switch {
		case c.wantErr == errAny && err == nil:
			t.Errorf("id %d: NULL scanned into an int64 without an error", c.id)
		case c.wantErr != errAny && err != c.wantErr:
			t.Errorf("id %d: error %v, want %v", c.id, err, c.wantErr)
		}
	}
	if err := conn.Raw(func(ci any) error { return r.close(ci) }); err != nil {
		t.Fatal(err)
	}
}

// errAny stands for any error in a table of cases.
var errAny = &struct{ error }{}
