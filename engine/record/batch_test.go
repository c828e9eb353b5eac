package record_test

import (
	"reflect"
	"testing"

	"lidi/engine/record"
)

// Every record list of a Batch is counted by Len and Bytes, emptied by
// Reset and carried by Append: a list added to Batch and forgotten in one of them
// fails here.
func TestBatchCoversEveryField(t *testing.T) {
	typ := reflect.TypeFor[record.Batch]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		if !f.IsExported() {
			continue
		}
		if f.Type.Kind() != reflect.Slice {
			t.Errorf("Batch.%s is a %s, want a list of records", f.Name, f.Type.Kind())
			continue
		}
		var b record.Batch
		field := reflect.ValueOf(&b).Elem().Field(i)
		field.Set(reflect.MakeSlice(f.Type, 1, 1))
		if b.Len() != 1 {
			t.Errorf("Len does not count Batch.%s", f.Name)
		}
		if b.Bytes() < int64(f.Type.Elem().Size()) {
			t.Errorf("Bytes counts %d for one record of Batch.%s, want at least its size %d", b.Bytes(), f.Name, f.Type.Elem().Size())
		}
		var dst record.Batch
		dst.Append(&b)
		if dst.Len() != 1 || reflect.ValueOf(&dst).Elem().Field(i).Len() != 1 {
			t.Errorf("Append does not carry Batch.%s", f.Name)
		}
		b.Reset()
		if field.Len() != 0 || b.Len() != 0 {
			t.Errorf("Reset does not empty Batch.%s", f.Name)
		}
	}
}

// Bytes counts what the records point to, not only their own size: a
// crawl's batches hold their bodies, heads and URLs.
func TestBatchBytesCountsPayloads(t *testing.T) {
	big := make([]byte, 1<<20)
	long := string(big[:1<<16])
	for _, tc := range []struct {
		name string
		b    record.Batch
		want int64
	}{
		{"a page's body", record.Batch{Pages: []record.PageRecord{{Body: big}}}, 1 << 20},
		{"a page's heads", record.Batch{Pages: []record.PageRecord{{Wire: big}}}, 1 << 20},
		{"a URL", record.Batch{URLs: []record.URLRecord{{URL: long}}}, 1 << 16},
		{"held links", record.Batch{Holds: []record.HeldLinks{{Links: []string{long, long}}}}, 2 << 16},
		{"a site's robots.txt", record.Batch{Sites: []record.SiteRecord{{RobotsBody: big}}}, 1 << 20},
		{"an event's text", record.Batch{Events: []record.Event{{Text: long}}}, 1 << 16},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.b.Bytes(); got < tc.want || got > tc.want+4096 {
				t.Errorf("Bytes() = %d, want %d and the record's size", got, tc.want)
			}
		})
	}
}
