package jsonfilter

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/template/parse"
)

// A --template is parsed by text/template's own parser and run here on
// decoded JSON (objects, arrays, strings, int64, Number, bool, null), with
// text/template's semantics for what JSON can hold: fields, variables,
// pipelines, if/else, range (with break and continue), with, define and
// template, and/or/not, eq/ne/lt/le/gt/ge, len, index, slice, print, printf,
// println, and the functions of templateFuncs. It is not text/template's
// executor because that one looks methods up by name through reflection,
// which keeps every exported method of every type in the binary: 11 MB
// more, and about 8% more instructions at every command's start (see
// docs/performance.md, "Start-up"). JSON values have no methods to call.
// FuzzTemplateDifferential (fuzz_test.go) holds it to text/template: same
// output, same class of error; README.md lists where it differs on purpose.

// builtinNames are the functions text/template predefines that a
// --template can call here.
var builtinNames = []string{"and", "or", "not", "len", "index", "slice", "eq", "ne", "lt", "le", "gt", "ge", "print", "printf", "println"}

// parseTemplate parses text, the functions named by builtinNames and
// templateFuncs known to the parser.
func parseTemplate(text string) (map[string]*parse.Tree, error) {
	names := map[string]any{}
	for _, n := range builtinNames {
		names[n] = true
	}
	for n := range templateFuncs(nil) {
		names[n] = true
	}
	return parse.Parse("--template", text, "", "", names)
}

// loopControl is what {{break}} and {{continue}} return to their range.
type loopControl string

func (l loopControl) Error() string { return string(l) }

const (
	errBreak    = loopControl("break")
	errContinue = loopControl("continue")
)

// execError is a failure at a node of the template, said with where.
type execError struct {
	context string
	err     error
}

func (e *execError) Error() string { return "at <" + e.context + ">: " + e.err.Error() }

type variable struct {
	name  string
	value any
	null  bool // a JSON null taken from an array or object: see fields
}

type state struct {
	trees map[string]*parse.Tree
	tree  *parse.Tree
	w     io.Writer
	funcs map[string]func(args []any) (any, error)
	vars  []variable
	depth int
	// dotNull is true while dot is a null element of a range (see fields).
	dotNull bool
}

func (s *state) errorf(n parse.Node, format string, a ...any) error {
	_, ctx := s.tree.ErrorContext(n)
	return &execError{ctx, fmt.Errorf(format, a...)}
}

// execute runs the template named "--template" on dot.
func execute(w io.Writer, trees map[string]*parse.Tree, funcs map[string]func([]any) (any, error), dot any) error {
	t := trees["--template"]
	if t == nil || t.Root == nil {
		return nil
	}
	s := &state{trees: trees, tree: t, w: w, funcs: funcs, vars: []variable{{name: "$", value: dot}}}
	return s.walk(dot, t.Root)
}

func (s *state) walk(dot any, node parse.Node) error {
	switch n := node.(type) {
	case *parse.ListNode:
		for _, c := range n.Nodes {
			if err := s.walk(dot, c); err != nil {
				return err
			}
		}
	case *parse.TextNode:
		_, err := s.w.Write(n.Text)
		return err
	case *parse.CommentNode:
	case *parse.ActionNode:
		v, err := s.pipeline(dot, n.Pipe)
		if err != nil || len(n.Pipe.Decl) > 0 {
			return err
		}
		_, err = io.WriteString(s.w, printable(v))
		return err
	case *parse.IfNode:
		return s.branch(dot, &n.BranchNode, false)
	case *parse.WithNode:
		return s.branch(dot, &n.BranchNode, true)
	case *parse.RangeNode:
		return s.rangeOver(dot, n)
	case *parse.BreakNode:
		return errBreak
	case *parse.ContinueNode:
		return errContinue
	case *parse.TemplateNode:
		t := s.trees[n.Name]
		if t == nil {
			return s.errorf(n, "no template %q", n.Name)
		}
		var v any
		if n.Pipe != nil {
			var err error
			if v, err = s.pipeline(dot, n.Pipe); err != nil {
				return err
			}
		}
		if s.depth++; s.depth > 100 {
			return s.errorf(n, "templates nested more than 100 deep")
		}
		inner := &state{trees: s.trees, tree: t, w: s.w, funcs: s.funcs, vars: []variable{{name: "$", value: v}}, depth: s.depth}
		err := inner.walk(v, t.Root)
		s.depth--
		return err
	default:
		return s.errorf(node, "unknown node %s", node)
	}
	return nil
}

func (s *state) branch(dot any, b *parse.BranchNode, with bool) error {
	mark := len(s.vars)
	defer func() { s.vars = s.vars[:mark] }()
	v, err := s.pipeline(dot, b.Pipe)
	if err != nil {
		return err
	}
	switch {
	case truth(v) && with:
		outer := s.dotNull
		s.dotNull = false
		defer func() { s.dotNull = outer }()
		return s.walk(v, b.List)
	case truth(v):
		return s.walk(dot, b.List)
	case b.ElseList != nil:
		return s.walk(dot, b.ElseList)
	}
	return nil
}

func (s *state) rangeOver(dot any, n *parse.RangeNode) error {
	mark := len(s.vars)
	defer func() { s.vars = s.vars[:mark] }()
	// The variables are declared (or set) to the whole value first, as
	// text/template does: an assigned one keeps it when there is nothing
	// to iterate.
	v, err := s.pipeline(dot, n.Pipe)
	if err != nil {
		return err
	}
	one := func(key, elem any) error {
		values := []any{elem}
		if len(n.Pipe.Decl) == 2 {
			values = []any{key, elem}
		}
		for i, d := range n.Pipe.Decl {
			if err := s.setVar(d, d.Ident[0], values[i], true); err != nil {
				return err
			}
		}
		outer := s.dotNull
		s.dotNull = elem == nil
		err := s.walk(elem, n.List)
		s.dotNull = outer
		s.vars = s.vars[:mark+len(n.Pipe.Decl)*boolInt(!n.Pipe.IsAssign)]
		return err
	}
	count := 0
	run := func(key, elem any) (stop bool, err error) {
		count++
		switch err := one(key, elem); {
		case errors.Is(err, errBreak):
			return true, nil
		case errors.Is(err, errContinue), err == nil:
			return false, nil
		default:
			return true, err
		}
	}
	switch v := v.(type) {
	case []any:
		for i, e := range v {
			if stop, err := run(int64(i), e); stop || err != nil {
				return err
			}
		}
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if stop, err := run(k, v[k]); stop || err != nil {
				return err
			}
		}
	case int64:
		if len(n.Pipe.Decl) > 1 {
			return s.errorf(n, "can't use %d to iterate over more than one variable", v)
		}
		for i := range v {
			if stop, err := run(i, i); stop || err != nil {
				return err
			}
		}
	case nil:
	default:
		return s.errorf(n, "range can't iterate over %s", describe(v))
	}
	if count == 0 && n.ElseList != nil {
		return s.walk(dot, n.ElseList)
	}
	return nil
}

func isHexInt(s string) bool {
	return len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && !strings.ContainsAny(s, "pP")
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// setVar sets a variable declared before; elem says that v is an element
// of a range (see fields).
func (s *state) setVar(n parse.Node, name string, v any, elem bool) error {
	for i := len(s.vars) - 1; i >= 0; i-- {
		if s.vars[i].name == name {
			s.vars[i].value, s.vars[i].null = v, elem && v == nil
			return nil
		}
	}
	return s.errorf(n, "undefined variable: %s", name)
}

func (s *state) lookupVar(n parse.Node, name string) (variable, error) {
	for i := len(s.vars) - 1; i >= 0; i-- {
		if s.vars[i].name == name {
			return s.vars[i], nil
		}
	}
	return variable{}, s.errorf(n, "undefined variable %s", name)
}

func (s *state) pipeline(dot any, p *parse.PipeNode) (any, error) {
	if p == nil {
		return nil, nil
	}
	var v any
	for i, c := range p.Cmds {
		var final []any
		if i > 0 {
			final = []any{v}
		}
		var err error
		if v, err = s.command(dot, c, final); err != nil {
			return nil, err
		}
	}
	for _, d := range p.Decl {
		if p.IsAssign {
			if err := s.setVar(d, d.Ident[0], v, false); err != nil {
				return nil, err
			}
		} else {
			s.vars = append(s.vars, variable{name: d.Ident[0], value: v})
		}
	}
	return v, nil
}

// command evaluates one command of a pipeline; final is the value piped
// into it, when there is one.
func (s *state) command(dot any, c *parse.CommandNode, final []any) (any, error) {
	if id, ok := c.Args[0].(*parse.IdentifierNode); ok {
		return s.call(dot, id, c.Args[1:], final)
	}
	if len(c.Args) > 1 || final != nil {
		// .a.b 1: text/template fails, but for a field of a missing
		// member, which it does not evaluate.
		switch n := c.Args[0].(type) {
		case *parse.FieldNode, *parse.ChainNode:
			return s.fieldArg(dot, n, true)
		case *parse.VariableNode:
			if len(n.Ident) > 1 {
				return s.fieldArg(dot, n, true)
			}
		}
		return nil, s.errorf(c, "%s is not a function: it takes no arguments", c.Args[0])
	}
	if _, ok := c.Args[0].(*parse.NilNode); ok {
		return nil, s.errorf(c, "nil is not a command")
	}
	return s.arg(dot, c.Args[0])
}

// fieldArg evaluates a field, variable or chain (.a.b, $x.a, (.a).b);
// called says the command gives it arguments.
func (s *state) fieldArg(dot any, n parse.Node, called bool) (any, error) {
	switch n := n.(type) {
	case *parse.FieldNode:
		return s.fields(n, dot, s.dotNull, ".", n.Ident, called)
	case *parse.VariableNode:
		v, err := s.lookupVar(n, n.Ident[0])
		if err != nil {
			return nil, err
		}
		return s.fields(n, v.value, v.null, n.Ident[0], n.Ident[1:], called)
	case *parse.ChainNode:
		v, err := s.arg(dot, n.Node)
		if err != nil {
			return nil, err
		}
		return s.fields(n, v, false, n.Node.String(), n.Field, called)
	}
	return nil, s.errorf(n, "can't evaluate %s", n)
}

// arg evaluates a node used as a value.
func (s *state) arg(dot any, n parse.Node) (any, error) {
	switch n := n.(type) {
	case *parse.DotNode:
		return dot, nil
	case *parse.FieldNode, *parse.VariableNode, *parse.ChainNode:
		return s.fieldArg(dot, n, false)
	case *parse.PipeNode:
		mark := len(s.vars)
		defer func() { s.vars = s.vars[:mark] }()
		return s.pipeline(dot, n)
	case *parse.IdentifierNode:
		return s.call(dot, n, nil, nil)
	case *parse.StringNode:
		return n.Text, nil
	case *parse.BoolNode:
		return n.True, nil
	case *parse.NumberNode:
		// As text/template types a number written in the template: float64
		// when it is written as one (1.0, 1e3), else int64 (its int).
		switch {
		case n.IsFloat && !isHexInt(n.Text) && !strings.HasPrefix(n.Text, "'") && strings.ContainsAny(n.Text, ".eEpP"):
			return n.Float64, nil
		case n.IsInt:
			return n.Int64, nil
		case n.IsUint:
			return nil, s.errorf(n, "%s overflows int", n.Text)
		}
		return nil, s.errorf(n, "invalid number %s", n.Text)
	case *parse.NilNode:
		return nil, nil
	}
	return nil, s.errorf(n, "can't evaluate %s", n)
}

// fields follows .a.b from v: a field of an object is its member, null when
// it has none, as text/template reads a map. A field of null is null too,
// except (text/template's nil interface) of a null that is a member of an
// object, or an element of a range: v, when null says so, or a member
// found on the way. called says the last field is given arguments, which
// fails but where there is nothing to take it of.
func (s *state) fields(n parse.Node, v any, null bool, path string, names []string, called bool) (any, error) {
	for i, name := range names {
		switch m := v.(type) {
		case map[string]any:
			if called && i == len(names)-1 {
				return nil, s.errorf(n, "%s is not a function: it takes no arguments", n)
			}
			v, null = m[name]
		case nil:
			if !null {
				return nil, nil
			}
			return nil, s.errorf(n, "%s is null, so it has no field %s", pathName(path), name)
		default:
			return nil, s.errorf(n, "%s is %s, which has no fields (asked for %s)", pathName(path), describe(m), name)
		}
		if path == "." {
			path += name
		} else {
			path += "." + name
		}
	}
	return v, nil
}

// pathName is path as a message names it: "." for dot itself.
func pathName(path string) string {
	if path == "." {
		return path
	}
	return strings.TrimSuffix(path, ".")
}

func (s *state) call(dot any, id *parse.IdentifierNode, argNodes []parse.Node, final []any) (any, error) {
	name := id.Ident
	if name == "and" || name == "or" {
		// The first false (and) or true (or) argument, else the last; the
		// ones after it are not evaluated.
		n := len(argNodes) + len(final)
		if n == 0 {
			return nil, s.errorf(id, "%s needs at least one argument", name)
		}
		var v any
		for i := range n {
			if i < len(argNodes) {
				var err error
				if v, err = s.arg(dot, argNodes[i]); err != nil {
					return nil, err
				}
			} else {
				v = final[0]
			}
			if truth(v) == (name == "or") {
				return v, nil
			}
		}
		return v, nil
	}
	args := make([]any, 0, len(argNodes)+len(final))
	for _, a := range argNodes {
		v, err := s.arg(dot, a)
		if err != nil {
			return nil, err
		}
		args = append(args, v)
	}
	args = append(args, final...)
	var v any
	var err error
	if fn := s.funcs[name]; fn != nil {
		v, err = fn(args)
	} else {
		v, err = builtin(name, args)
	}
	if err != nil {
		return nil, s.errorf(id, "%s: %v", name, err)
	}
	return v, nil
}

// truth is text/template's: false, 0, null, "" and empty arrays and objects
// are false.
func truth(v any) bool {
	switch v := v.(type) {
	case nil:
		return false
	case bool:
		return v
	case int64:
		return v != 0
	case Number:
		return v != 0
	case float64:
		return v != 0
	case string:
		return v != ""
	case []any:
		return len(v) > 0
	case map[string]any:
		return len(v) > 0
	}
	return true
}

// printable is how a value prints: null as "<no value>" (as text/template
// prints a missing map key), an array or object as JSON.
func printable(v any) string {
	switch v := v.(type) {
	case nil:
		return "<no value>"
	case string:
		return v
	case []any, map[string]any, jsonArray, jsonObject:
		b, err := json.Marshal(jsonValue(v))
		if err != nil {
			return fmt.Sprint(v)
		}
		return string(b)
	}
	return fmt.Sprint(v)
}

// jsonValue undoes templateValue's number types for encoding as JSON.
func jsonValue(v any) any {
	switch v := v.(type) {
	case Number:
		return json.Number(v.String())
	case []any:
		if v == nil {
			return v
		}
		out := make([]any, len(v))
		for i := range v {
			out[i] = jsonValue(v[i])
		}
		return out
	case jsonArray:
		return jsonValue([]any(v))
	case map[string]any:
		out := make(map[string]any, len(v))
		for k := range v {
			out[k] = jsonValue(v[k])
		}
		return out
	case jsonObject:
		return jsonValue(map[string]any(v))
	}
	return v
}

// describe names the JSON type of v, for messages.
func describe(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case int64, Number, float64:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return "a value"
}

// builtin runs one of text/template's predefined functions (builtinNames).
func builtin(name string, a []any) (any, error) {
	switch name {
	case "not":
		if len(a) != 1 {
			return nil, errors.New("want one argument")
		}
		return !truth(a[0]), nil
	case "len":
		switch v := first(a, 1).(type) {
		case string:
			return int64(len(v)), nil
		case []any:
			return int64(len(v)), nil
		case map[string]any:
			return int64(len(v)), nil
		}
		return nil, errors.New("want one string, array or object")
	case "index":
		if len(a) == 0 {
			return nil, errors.New("want a value to index")
		}
		v := a[0]
		if v == nil {
			return nil, errors.New("index of null")
		}
		for _, k := range a[1:] {
			switch x := v.(type) {
			case []any:
				i, err := indexArg(k, len(x))
				if err != nil {
					return nil, err
				}
				v = x[i]
			case string:
				// A byte, as text/template indexes a string.
				i, err := indexArg(k, len(x))
				if err != nil {
					return nil, err
				}
				v = int64(x[i])
			case map[string]any:
				key, ok := k.(string)
				if !ok {
					return nil, fmt.Errorf("an object's index is a string, not %s", describe(k))
				}
				v = x[key]
			case nil:
				return nil, errors.New("index of null")
			default:
				return nil, fmt.Errorf("can't index %s", describe(x))
			}
		}
		return v, nil
	case "slice":
		// As text/template slices: up to three indexes (x[i:j:k], not for
		// a string), each up to the capacity, which is an array's length
		// unless it is a slice of one.
		if len(a) == 0 || a[0] == nil {
			return nil, errors.New("slice of null")
		}
		if len(a) > 4 {
			return nil, fmt.Errorf("too many slice indexes: %d", len(a)-1)
		}
		var n, capacity int
		switch x := a[0].(type) {
		case string:
			if len(a) == 4 {
				return nil, errors.New("a string takes two slice indexes, not three")
			}
			n, capacity = len(x), len(x)
		case []any:
			n, capacity = len(x), cap(x)
		default:
			return nil, fmt.Errorf("can't slice %s", describe(x))
		}
		idx := [3]int64{0, int64(n), int64(capacity)}
		for i, k := range a[1:] {
			v, err := indexArg(k, capacity+1)
			if err != nil {
				return nil, err
			}
			idx[i] = v
		}
		for i := range 2 {
			if idx[i] > idx[i+1] {
				return nil, fmt.Errorf("invalid slice indexes %d > %d", idx[i], idx[i+1])
			}
		}
		if s, ok := a[0].(string); ok {
			return s[idx[0]:idx[1]], nil
		}
		return a[0].([]any)[idx[0]:idx[1]:idx[2]], nil
	case "eq", "ne", "lt", "le", "gt", "ge":
		if len(a) < 2 || name != "eq" && len(a) != 2 {
			return nil, errors.New("want two arguments (eq: two or more)")
		}
		switch name {
		case "eq":
			for _, b := range a[1:] {
				if eq, err := equal(a[0], b); eq || err != nil {
					return eq, err
				}
			}
			return false, nil
		case "ne":
			eq, err := equal(a[0], a[1])
			return !eq, err
		case "lt", "ge":
			lt, err := less(a[0], a[1])
			return lt == (name == "lt"), err
		}
		lt, err := less(a[0], a[1])
		if !lt && err == nil {
			lt, err = equal(a[0], a[1])
		}
		return lt == (name == "le"), err
	case "print", "println":
		args := make([]any, len(a))
		for i, v := range a {
			args[i] = printArg(v)
		}
		if name == "println" {
			return fmt.Sprintln(args...), nil
		}
		return fmt.Sprint(args...), nil
	case "printf":
		if len(a) == 0 {
			return nil, errors.New("want a format string first")
		}
		format, ok := a[0].(string)
		if !ok {
			return nil, errors.New("want a format string first")
		}
		args := make([]any, len(a)-1)
		for i, v := range a[1:] {
			args[i] = printArg(v)
		}
		return fmt.Sprintf(format, args...), nil
	}
	return nil, fmt.Errorf("function %q not defined", name)
}

// indexArg is k as an index of something n long.
func indexArg(k any, n int) (int64, error) {
	i, ok := k.(int64)
	if !ok {
		return 0, fmt.Errorf("an index is a whole number, not %s", describe(k))
	}
	if i < 0 || i >= int64(n) {
		return 0, fmt.Errorf("index %d out of range of %d", i, n)
	}
	return i, nil
}

// printArg is a value as print, printf and println take it: an array or
// object as a jsonArray or jsonObject, so that it prints as JSON and fmt
// puts spaces around it as around any operand that is not a string.
func printArg(v any) any {
	switch v := v.(type) {
	case []any:
		if v == nil {
			return jsonArray(nil)
		}
		out := make(jsonArray, len(v))
		for i := range v {
			out[i] = printArg(v[i])
		}
		return out
	case map[string]any:
		out := make(jsonObject, len(v))
		for k := range v {
			out[k] = printArg(v[k])
		}
		return out
	}
	return v
}

// kindOf is what text/template compares a value as: "" for null, arrays
// and objects, which only eq and ne take.
func kindOf(v any) string {
	switch v.(type) {
	case bool:
		return "bool"
	case int64:
		return "int"
	case Number, float64:
		return "float"
	case string:
		return "string"
	}
	return ""
}

// mixedNumbers says whether a and b are a whole and a fractional number,
// which chatq compares by value where text/template fails: whether a JSON
// number is one or the other depends on how it was written.
func mixedNumbers(a, b any) (x, y float64, ok bool) {
	ka, kb := kindOf(a), kindOf(b)
	if ka == kb || ka != "int" && ka != "float" || kb != "int" && kb != "float" {
		return 0, 0, false
	}
	return toFloat(a), toFloat(b), true
}

func toFloat(v any) float64 {
	switch v := v.(type) {
	case int64:
		return float64(v)
	case Number:
		return float64(v)
	case float64:
		return v
	}
	return 0
}

// equal is text/template's eq for two values: values of one kind compare,
// null equals only null (or a null array), and anything else fails, but
// that null with anything is false.
func equal(a, b any) (bool, error) {
	if x, y, ok := mixedNumbers(a, b); ok {
		return x == y, nil
	}
	ka, kb := kindOf(a), kindOf(b)
	switch {
	case ka != kb && a != nil && b != nil:
		return false, fmt.Errorf("can't compare %s with %s", describe(a), describe(b))
	case ka != kb:
		return false, nil
	case ka == "bool":
		return a == b, nil
	case ka == "int":
		return a.(int64) == b.(int64), nil
	case ka == "float":
		return toFloat(a) == toFloat(b), nil
	case ka == "string":
		return a.(string) == b.(string), nil
	}
	_, arrA := a.([]any)
	_, arrB := b.([]any)
	if a != nil && b != nil && arrA != arrB {
		return false, fmt.Errorf("can't compare %s with %s", describe(a), describe(b))
	}
	nullA, nullB := isNull(a), isNull(b)
	if nullA || nullB {
		return nullA == nullB, nil
	}
	return false, fmt.Errorf("can't compare %s with %s", describe(a), describe(b))
}

// isNull says whether v is null or a null array (pluck of nothing).
func isNull(v any) bool {
	l, ok := v.([]any)
	return v == nil || ok && l == nil
}

// less is text/template's lt: numbers by value, strings by bytes.
func less(a, b any) (bool, error) {
	if x, y, ok := mixedNumbers(a, b); ok {
		return x < y, nil
	}
	switch ka, kb := kindOf(a), kindOf(b); {
	case ka == "" || ka != kb || ka == "bool":
		return false, fmt.Errorf("can't compare %s with %s", describe(a), describe(b))
	case ka == "int":
		return a.(int64) < b.(int64), nil
	case ka == "float":
		return toFloat(a) < toFloat(b), nil
	}
	return a.(string) < b.(string), nil
}

// jsonArray and jsonObject are an array and an object as print, printf and
// println see them: values that print as JSON (%v, %s), as an action does.
type (
	jsonArray  []any
	jsonObject map[string]any
)

func (a jsonArray) String() string  { return printable(a) }
func (o jsonObject) String() string { return printable(o) }
