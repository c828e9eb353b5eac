package keys

import (
	"encoding"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Decode reads a YAML document over v, a pointer to a struct whose fields
// declare keys, keeping what the document does not name. It walks the
// document itself rather than leaving it to yaml's decoder so that every
// error is an *Error naming the key and its line and saying what to write
// ("write a duration such as 5s or 200ms"), and so that a section written
// empty keeps its defaults. A key may be written nested or dotted
// ("politeness: {delay: 5s}" or "politeness.delay: 5s"); a key written
// twice is an error. A type that implements encoding.TextUnmarshaler reads
// its own values, and its error says what to write. Decode returns the line of every key written, for
// errors found later (see Locate). It does not run the checks: see Check.
func Decode(data []byte, v any) (lines map[string]int, err error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, syntaxError(err)
	}
	d := decoder{lines: map[string]int{}}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return d.lines, nil // an empty file: the defaults
	}
	root := reflect.ValueOf(v).Elem()
	if err := d.section(doc.Content[0], root, Of(root.Type()), "", ""); err != nil {
		return nil, err
	}
	return d.lines, nil
}

type decoder struct {
	lines map[string]int // key as written out ("cluster.pins[0].tag") → line
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): `)

// syntaxError is yaml's error for a file that is not YAML, with its line
// when yaml gives one.
func syntaxError(err error) error {
	msg := err.Error()
	line := 0
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = msg[len(m[0]):]
	}
	return &Error{Line: line, Err: fmt.Errorf("not YAML: %s", strings.TrimPrefix(msg, "yaml: "))}
}

func deref(n *yaml.Node) *yaml.Node {
	for depth := 0; n != nil && n.Kind == yaml.AliasNode && depth < 100; depth++ {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.Tag == "!!null" }

// section reads the mapping n, the keys of ks under section (a prefix such
// as "politeness." or ""), into root; path is how the section is named in
// messages ("cluster.pins[0]." for the keys of a list's entry).
func (d *decoder) section(n *yaml.Node, root reflect.Value, ks []Key, section, path string) error {
	name := strings.TrimSuffix(path, ".")
	if n = deref(n); n == nil || n.Kind != yaml.MappingNode {
		if n != nil && isNull(n) {
			return nil // "politeness:" alone: its defaults
		}
		return d.bad(n, sectionHint(ks, section, name), name)
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		full, shown := section+k.Value, path+k.Value
		if first, dup := seen[k.Value]; dup {
			return &Error{Line: k.Line, Key: shown, Err: fmt.Errorf("written twice (first on line %d): keep one", first)}
		}
		seen[k.Value] = k.Line
		d.lines[shown] = k.Line
		if key, ok := find(ks, full); ok {
			if err := d.value(val, root.FieldByIndex(key.Index), shown); err != nil {
				return err
			}
			continue
		}
		if len(children(ks, full+".")) > 0 {
			if err := d.section(val, root, ks, full+".", shown+"."); err != nil {
				return err
			}
			continue
		}
		of := ""
		if name != "" {
			of = " of " + name
		}
		return &Error{Line: k.Line, Key: shown, Err: fmt.Errorf("unknown key: the keys%s are %s", of, strings.Join(children(ks, section), ", "))}
	}
	return nil
}

func find(ks []Key, name string) (Key, bool) {
	for _, k := range ks {
		if k.Name == name {
			return k, true
		}
	}
	return Key{}, false
}

// value reads n into the field v, the key shown.
func (d *decoder) value(n *yaml.Node, v reflect.Value, shown string) error {
	if n = deref(n); n == nil {
		return d.bad(n, whatToWrite(v.Type()), shown)
	}
	switch {
	case v.Kind() == reflect.Slice && isSection(v.Type().Elem()):
		if isNull(n) {
			v.SetZero()
			return nil
		}
		if n.Kind != yaml.SequenceNode {
			return d.bad(n, whatToWrite(v.Type()), shown)
		}
		ks := Of(v.Type().Elem())
		s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
		for i, item := range n.Content {
			entry := fmt.Sprintf("%s[%d]", shown, i)
			d.lines[entry] = item.Line
			if err := d.section(item, s.Index(i), ks, "", entry+"."); err != nil {
				return err
			}
		}
		v.Set(s)
		return nil
	case isNull(n) && (v.Kind() == reflect.String || v.Kind() == reflect.Slice):
		v.SetZero() // "ca_file:" alone: none
		return nil
	}
	p := reflect.New(v.Type())
	if isNull(n) {
		return d.bad(n, whatToWrite(v.Type()), shown)
	}
	if err := n.Decode(p.Interface()); err != nil {
		hint := whatToWrite(v.Type())
		if _, ok := p.Interface().(encoding.TextUnmarshaler); ok && n.Kind == yaml.ScalarNode {
			hint = strings.TrimPrefix(err.Error(), "yaml: ") // the type's own words: "write seeds, all or off"
		}
		return d.bad(n, hint, shown)
	}
	v.Set(p.Elem())
	return nil
}

// bad is the error for n at key: what to write instead, and what was.
func (d *decoder) bad(n *yaml.Node, hint, key string) error {
	if n == nil {
		return &Error{Key: key, Err: fmt.Errorf("%s (got an alias of nothing)", hint)}
	}
	got := ""
	switch n.Kind {
	case yaml.ScalarNode:
		if isNull(n) {
			got = "nothing"
		} else {
			got = strconv.Quote(n.Value)
		}
		if _, err := strconv.ParseFloat(n.Value, 64); err == nil && strings.Contains(hint, "duration") {
			got += ", a number without a unit"
		}
	case yaml.MappingNode:
		got = "keys"
	case yaml.SequenceNode:
		got = "a list"
	default:
		got = "an alias"
	}
	return &Error{Line: n.Line, Key: key, Err: fmt.Errorf("%s (got %s)", hint, got)}
}

// sectionHint says what a section holds.
func sectionHint(ks []Key, section, name string) string {
	keys := strings.Join(children(ks, section), ", ")
	if name == "" {
		return "write keys with their values, such as robots: 16, one per line: " + keys
	}
	return "write its keys on the lines below it, indented: " + keys
}

// whatToWrite says what a value of type t looks like in the file.
func whatToWrite(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Bool:
		return "write true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if t == durationType {
			return "write a duration such as 5s or 200ms"
		}
		return "write a whole number such as 10"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "write a whole number such as 10"
	case reflect.Float32, reflect.Float64:
		return "write a number such as 0.5"
	case reflect.String:
		return `write one value, in quotes if it holds ": " or starts with a sign such as [ { * & ! | > ' " % @ or #`
	case reflect.Slice:
		if isSection(t.Elem()) {
			return "write a list of {key: value, ...} entries, one per line after \"- \": their keys are " + strings.Join(children(Of(t.Elem()), ""), ", ")
		}
		return "write a list such as [a, b], or one item per line after \"- \""
	}
	return "write a " + t.String()
}

// Locate gives err, if it is an *Error, the file and the line of its key
// (or of the nearest enclosing key written), from the lines Decode
// returned.
func Locate(err error, file string, lines map[string]int) {
	var e *Error
	if !errors.As(err, &e) {
		return
	}
	e.File = file
	for k := e.Key; e.Line == 0 && k != ""; {
		e.Line = lines[k]
		i := strings.LastIndexAny(k, ".[")
		if i < 0 {
			break
		}
		k = k[:i]
	}
}
