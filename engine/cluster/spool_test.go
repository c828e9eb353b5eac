package cluster

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func pendingIDs(s *Spool) []string {
	var ids []string
	for _, e := range s.Pending() {
		ids = append(ids, e.ID)
	}
	return ids
}

func TestSpoolKeepsWhatIsNotDone(t *testing.T) {
	tests := []struct {
		name string
		put  []string
		done []string
		want []string
	}{
		{"nothing", nil, nil, nil},
		{"all pending", []string{"a", "b", "c"}, nil, []string{"a", "b", "c"}},
		{"some done", []string{"a", "b", "c"}, []string{"b"}, []string{"a", "c"}},
		{"all done", []string{"a", "b"}, []string{"a", "b"}, nil},
		{"unknown done", []string{"a"}, []string{"zz"}, []string{"a"}},
		{"put again", []string{"a", "b", "a"}, nil, []string{"a", "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "spool")
			s, err := OpenSpool(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, id := range tt.put {
				if err := s.Put(id, []byte("payload of "+id)); err != nil {
					t.Fatal(err)
				}
			}
			for _, id := range tt.done {
				if err := s.Done(id); err != nil {
					t.Fatal(err)
				}
			}
			if got := pendingIDs(s); !slices.Equal(got, tt.want) {
				t.Errorf("before reopening: pending %v, want %v", got, tt.want)
			}
			s.Close()
			// What a restarted slave finds.
			s, err = OpenSpool(path)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if got := pendingIDs(s); !slices.Equal(got, tt.want) {
				t.Errorf("after reopening: pending %v, want %v", got, tt.want)
			}
			for _, e := range s.Pending() {
				if string(e.Payload) != "payload of "+e.ID {
					t.Errorf("%s: payload %q", e.ID, e.Payload)
				}
			}
		})
	}
}

// A kill in the middle of a write leaves a torn record: it is cut off and
// what came before is kept.
func TestSpoolCutsATornTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spool")
	s, err := OpenSpool(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := s.Put(fmt.Sprint("lease-", i), make([]byte, 100)); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	whole := len(data)
	for cut := 1; cut < 100; cut += 7 {
		if err := os.WriteFile(path, data[:whole-cut], 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := OpenSpool(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := pendingIDs(s); !slices.Equal(got, []string{"lease-0", "lease-1"}) {
			t.Fatalf("cut %d bytes: pending %v", cut, got)
		}
		// The spool goes on after the cut.
		if err := s.Put("lease-3", []byte("x")); err != nil {
			t.Fatal(err)
		}
		s.Close()
		s, err = OpenSpool(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := pendingIDs(s); !slices.Equal(got, []string{"lease-0", "lease-1", "lease-3"}) {
			t.Fatalf("cut %d bytes, then a put: pending %v", cut, got)
		}
		s.Close()
	}
}

// A flipped byte fails the record's CRC: the record and what follows it
// are not trusted.
func TestSpoolRejectsADamagedRecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spool")
	s, err := OpenSpool(path)
	if err != nil {
		t.Fatal(err)
	}
	s.Put("a", []byte("first"))
	s.Put("b", []byte("second"))
	s.Close()
	data, _ := os.ReadFile(path)
	data[len(data)-6] ^= 0xff // inside b's payload
	os.WriteFile(path, data, 0o600)
	s, err = OpenSpool(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := pendingIDs(s); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("pending %v, want [a]", got)
	}
}

// The file does not grow without bound: once everything is done it is
// emptied.
func TestSpoolShrinksWhenAllDone(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spool")
	s, err := OpenSpool(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range 50 {
		id := fmt.Sprint(i)
		if err := s.Put(id, make([]byte, 1000)); err != nil {
			t.Fatal(err)
		}
		if err := s.Done(id); err != nil {
			t.Fatal(err)
		}
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() != 0 {
		t.Fatalf("spool file is %d bytes with nothing pending", fi.Size())
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Put("late", nil); err != ErrSpoolClosed {
		t.Fatalf("Put after Close: %v, want ErrSpoolClosed", err)
	}
}
