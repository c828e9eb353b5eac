package record_test

import (
	"reflect"
	"testing"

	"lidi/engine/record"
)

// Every record list of a Batch is counted by Len, emptied by Reset and
// carried by Append: a list added to Batch and forgotten in one of them
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
