// Package keys reads lidi's configuration keys from the struct fields that
// declare them, so that a key is written once: its yaml tag (the dotted
// name in config.yaml), its doc comment, and a check tag for the simple
// bounds a value must keep. Decode reads a YAML file into such a struct
// with errors that name the file, the line and the key and say what to
// write; Check enforces the check tags; Marshal writes the keys back.
//
// A field's yaml tag is its key, relative to the struct's own: "delay" in a
// struct tagged "politeness" is politeness.delay, and a tag may name a key
// of a section by its dotted path ("politeness.delay") to place a field of
// a flat struct in a section, so that one struct may hold the keys of
// several sections and several structs the keys of one. A struct field is a
// section of its fields' keys; ",inline" adds a struct's keys to its
// parent's; fields without a yaml tag, or tagged "-", are not keys.
//
// A check tag bounds a number or a duration: ">0", ">=0", ">=1", "<=24h",
// "1..9" (inclusive), several separated by commas.
package keys

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
	"time"
)

// Error is a configuration value that cannot be used. Its message names
// where the value is ("config: site.yaml:12: politeness.delay: ...") and
// says what to write instead.
type Error struct {
	File string // the config file read, if any
	Line int    // the line of the file the key is on; 0: not known (the key was not written)
	Key  string // the key: "politeness.delay", "cluster.pins[0].tag"; "" for a file that is not YAML
	Err  error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("config: ")
	switch {
	case e.File != "" && e.Line > 0:
		fmt.Fprintf(&b, "%s:%d: ", e.File, e.Line)
	case e.File != "":
		b.WriteString(e.File + ": ")
	case e.Line > 0:
		fmt.Fprintf(&b, "line %d: ", e.Line)
	}
	if e.Key != "" {
		b.WriteString(e.Key + ": ")
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// A Key is one configuration key of a struct type.
type Key struct {
	Name  string       // dotted: "politeness.delay"
	Index []int        // the field, for reflect.Value.FieldByIndex
	Type  reflect.Type // the field's type
	Check string       // the field's check tag
}

var cache sync.Map // reflect.Type → []Key

// Of lists the keys of struct type t, in the order its fields declare them.
func Of(t reflect.Type) []Key {
	if ks, ok := cache.Load(t); ok {
		return ks.([]Key)
	}
	ks := collect(t, "", nil)
	cache.Store(t, ks)
	return ks
}

func collect(t reflect.Type, prefix string, index []int) []Key {
	var ks []Key
	for i := range t.NumField() {
		f := t.Field(i)
		tag, ok := f.Tag.Lookup("yaml")
		name, opts, _ := strings.Cut(tag, ",")
		if !ok || !f.IsExported() || name == "-" {
			continue
		}
		idx := append(append([]int(nil), index...), i)
		switch {
		case opts == "inline":
			ks = append(ks, collect(f.Type, prefix, idx)...)
		case isSection(f.Type):
			ks = append(ks, collect(f.Type, prefix+name+".", idx)...)
		default:
			ks = append(ks, Key{Name: prefix + name, Index: idx, Type: f.Type, Check: f.Tag.Get("check")})
		}
	}
	return ks
}

var durationType = reflect.TypeFor[time.Duration]()

// isSection reports whether a field of type t holds keys of its own.
func isSection(t reflect.Type) bool {
	if t.Kind() != reflect.Struct {
		return false
	}
	for i := range t.NumField() {
		if _, ok := t.Field(i).Tag.Lookup("yaml"); ok {
			return true
		}
	}
	return false
}

// children lists the names one level below section (the whole file for
// ""), in order, each once.
func children(ks []Key, section string) []string {
	var names []string
	seen := map[string]bool{}
	for _, k := range ks {
		rest, ok := strings.CutPrefix(k.Name, section)
		if !ok {
			continue
		}
		name, _, _ := strings.Cut(rest, ".")
		if !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
	}
	return names
}
