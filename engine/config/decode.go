package config

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"lidi/engine"
)

// decode reads a YAML document over v, a pointer to a struct whose fields
// carry yaml tags. It walks the document itself rather than leaving it to
// yaml's decoder so that every error is an *engine.ConfigError naming the
// key and its line and saying what to write ("write a duration such as 5s
// or 200ms"), and so that a section written empty keeps its defaults. It
// returns the line of every key written, for errors found later.
func decode(data []byte, v any) (lines map[string]int, err error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, syntaxError(err)
	}
	d := decoder{lines: map[string]int{}}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return d.lines, nil // an empty file: the defaults
	}
	if err := d.value(doc.Content[0], reflect.ValueOf(v).Elem(), ""); err != nil {
		return nil, err
	}
	return d.lines, nil
}

type decoder struct {
	lines map[string]int // dotted key → line
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): `)

// syntaxError is yaml's error for a file that is not YAML, with its line.
func syntaxError(err error) error {
	msg := err.Error()
	line := 0
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = msg[len(m[0]):]
	}
	msg = strings.TrimPrefix(msg, "yaml: ")
	return &engine.ConfigError{Line: line, Err: fmt.Errorf("not YAML: %s", msg)}
}

var durationType = reflect.TypeFor[time.Duration]()

func (d *decoder) value(n *yaml.Node, v reflect.Value, key string) error {
	for depth := 0; n.Kind == yaml.AliasNode; depth++ {
		if n.Alias == nil || depth > 100 {
			return d.bad(n, v.Type(), key)
		}
		n = n.Alias
	}
	null := n.Kind == yaml.ScalarNode && n.Tag == "!!null"
	switch {
	case v.Kind() == reflect.Struct:
		if null {
			return nil // "politeness:" alone: its defaults
		}
		return d.mapping(n, v, key)
	case v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Struct:
		if null {
			v.SetZero()
			return nil
		}
		if n.Kind != yaml.SequenceNode {
			return d.bad(n, v.Type(), key)
		}
		s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
		for i, item := range n.Content {
			k := fmt.Sprintf("%s[%d]", key, i)
			d.lines[k] = item.Line
			if err := d.value(item, s.Index(i), k); err != nil {
				return err
			}
		}
		v.Set(s)
		return nil
	case null && (v.Kind() == reflect.String || v.Kind() == reflect.Slice):
		v.SetZero() // "ca_file:" alone: none
		return nil
	}
	p := reflect.New(v.Type())
	if null || n.Decode(p.Interface()) != nil {
		return d.bad(n, v.Type(), key)
	}
	v.Set(p.Elem())
	return nil
}

// mapping reads the keys of n into the struct v.
func (d *decoder) mapping(n *yaml.Node, v reflect.Value, key string) error {
	if n.Kind != yaml.MappingNode {
		return d.bad(n, v.Type(), key)
	}
	fields := yamlFields(v.Type())
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		path := k.Value
		if key != "" {
			path = key + "." + k.Value
		}
		f, ok := field(fields, k.Value)
		switch {
		case !ok:
			return &engine.ConfigError{Line: k.Line, Key: path, Err: fmt.Errorf("unknown key: the keys%s are %s", of(key), keysOf(v.Type()))}
		case seen[k.Value] > 0:
			return &engine.ConfigError{Line: k.Line, Key: path, Err: fmt.Errorf("written twice (first on line %d): keep one", seen[k.Value])}
		}
		seen[k.Value] = k.Line
		d.lines[path] = k.Line
		if err := d.value(val, v.FieldByIndex(f.index), path); err != nil {
			return err
		}
	}
	return nil
}

func of(key string) string {
	if key == "" {
		return ""
	}
	return " of " + key
}

// bad is the error for n, which cannot be read as a t: what to write.
func (d *decoder) bad(n *yaml.Node, t reflect.Type, key string) error {
	got := ""
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			got = "nothing"
		} else {
			got = strconv.Quote(n.Value)
		}
		if _, err := strconv.ParseFloat(n.Value, 64); err == nil && t == durationType {
			got += ", a number without a unit"
		}
	case yaml.MappingNode:
		got = "keys"
	case yaml.SequenceNode:
		got = "a list"
	default:
		got = "an alias"
	}
	return &engine.ConfigError{Line: n.Line, Key: key, Err: fmt.Errorf("%s (got %s)", whatToWrite(t, key), got)}
}

// whatToWrite says what a value of type t looks like in the file, at key.
func whatToWrite(t reflect.Type, key string) string {
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
		if t.Elem().Kind() == reflect.Struct {
			return "write a list of {key: value, ...} entries, one per line after \"- \""
		}
		return "write a list such as [a, b], or one item per line after \"- \""
	case reflect.Struct:
		if key == "" {
			return "write keys with their values, such as robots: 16, one per line: " + keysOf(t)
		}
		return "write its keys on the lines below it, indented: " + keysOf(t)
	}
	return "write a " + t.String()
}

// A yamlField is a key of a struct type and the field it is read into.
type yamlField struct {
	key   string
	index []int // for reflect.Value.FieldByIndex
}

// yamlFields lists the keys of struct type t in their order, those of
// ",inline" fields included.
func yamlFields(t reflect.Type) []yamlField {
	var fields []yamlField
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		switch {
		case !f.IsExported() || name == "-":
		case opts == "inline":
			for _, in := range yamlFields(f.Type) {
				fields = append(fields, yamlField{in.key, append([]int{i}, in.index...)})
			}
		default:
			if name == "" {
				name = strings.ToLower(f.Name)
			}
			fields = append(fields, yamlField{name, []int{i}})
		}
	}
	return fields
}

// field finds key among fields.
func field(fields []yamlField, key string) (yamlField, bool) {
	for _, f := range fields {
		if f.key == key {
			return f, true
		}
	}
	return yamlField{}, false
}

// keysOf lists the keys of struct type t, for messages.
func keysOf(t reflect.Type) string {
	var keys []string
	for _, f := range yamlFields(t) {
		keys = append(keys, f.key)
	}
	return strings.Join(keys, ", ")
}

// locate gives err, if it is a *engine.ConfigError, the file and the line
// of its key (or of the nearest enclosing key written).
func locate(err error, file string, lines map[string]int) error {
	var ce *engine.ConfigError
	if !errors.As(err, &ce) {
		if file == "" {
			return fmt.Errorf("config: %w", err)
		}
		return fmt.Errorf("config: %s: %w", file, err)
	}
	ce.File = file
	for k := ce.Key; ce.Line == 0 && k != ""; {
		ce.Line = lines[k]
		i := strings.LastIndexAny(k, ".[")
		if i < 0 {
			break
		}
		k = k[:i]
	}
	return err
}
