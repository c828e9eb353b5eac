package keys

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Check enforces the check tags of the keys of *v (v a pointer to a struct)
// and returns the first value out of bounds as an *Error naming its key.
// It panics on a check tag it cannot read: a programming error.
func Check(v any) error {
	root := reflect.ValueOf(v).Elem()
	for _, k := range Of(root.Type()) {
		if k.Check == "" {
			continue
		}
		f := root.FieldByIndex(k.Index)
		for _, c := range strings.Split(k.Check, ",") {
			if msg := check(f, c); msg != "" {
				return &Error{Key: k.Name, Err: fmt.Errorf("must %s, got %s", msg, show(f))}
			}
		}
	}
	return nil
}

// check tests f against one bound; it returns what f must be when f is out.
func check(f reflect.Value, c string) string {
	lo, hi, isRange := strings.Cut(c, "..")
	switch {
	case isRange:
		if less(f, bound(f, lo)) || less(bound(f, hi), f) {
			return "be " + lo + ".." + hi
		}
	case strings.HasPrefix(c, ">="):
		if b := bound(f, c[2:]); less(f, b) {
			if c[2:] == "0" {
				return "not be negative"
			}
			return "be at least " + c[2:]
		}
	case strings.HasPrefix(c, "<="):
		if b := bound(f, c[2:]); less(b, f) {
			return "be at most " + c[2:]
		}
	case strings.HasPrefix(c, ">"):
		if b := bound(f, c[1:]); !less(b, f) {
			if c[1:] == "0" {
				return "be positive"
			}
			return "be more than " + c[1:]
		}
	default:
		panic("keys: unknown check " + strconv.Quote(c))
	}
	return ""
}

// bound parses s as a value of f's type.
func bound(f reflect.Value, s string) reflect.Value {
	b := reflect.New(f.Type()).Elem()
	var err error
	switch {
	case f.Type() == durationType:
		var d time.Duration
		d, err = time.ParseDuration(s)
		b.SetInt(int64(d))
	case f.CanInt():
		var n int64
		n, err = strconv.ParseInt(s, 10, 64)
		b.SetInt(n)
	case f.CanFloat():
		var x float64
		x, err = strconv.ParseFloat(s, 64)
		b.SetFloat(x)
	default:
		panic("keys: check on a " + f.Type().String())
	}
	if err != nil {
		panic("keys: bad bound " + strconv.Quote(s) + ": " + err.Error())
	}
	return b
}

func less(a, b reflect.Value) bool {
	if a.CanInt() {
		return a.Int() < b.Int()
	}
	return a.Float() < b.Float()
}

func show(f reflect.Value) string {
	if f.Type() == durationType {
		return time.Duration(f.Int()).String()
	}
	return fmt.Sprint(f.Interface())
}

// Marshal writes the keys of *v (v a pointer to a struct) as YAML, one
// dotted key a line ("politeness.delay: 15s"), which Decode reads back
// over the same defaults. A nil list is left out.
func Marshal(v any) ([]byte, error) {
	root := reflect.ValueOf(v).Elem()
	doc := &yaml.Node{Kind: yaml.MappingNode}
	for _, k := range Of(root.Type()) {
		f := root.FieldByIndex(k.Index)
		if f.Kind() == reflect.Slice && f.IsNil() {
			continue // a nil list may mean something else than an empty one (urls.drop_params: the built-in list)
		}
		var val yaml.Node
		if err := val.Encode(f.Interface()); err != nil {
			return nil, fmt.Errorf("keys: %s: %w", k.Name, err)
		}
		flow(&val)
		doc.Content = append(doc.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: k.Name}, &val)
	}
	return yaml.Marshal(doc)
}

// flow writes lists and mappings on one line.
func flow(n *yaml.Node) {
	if n.Kind == yaml.SequenceNode || n.Kind == yaml.MappingNode {
		n.Style = yaml.FlowStyle
	}
	for _, c := range n.Content {
		flow(c)
	}
}
