package jsonfilter

import (
	"bytes"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"text/template"
	"text/template/parse"
	"time"
)

// FuzzTemplateDifferential runs a template over a JSON document through
// chatq's executor and through text/template's (linked into this test
// binary only), and fails when they differ: in the output when both
// succeed, or in the class of the outcome (parse error, execution error,
// success). The template is raw, the bytes of gen expanded by a small
// grammar of actions after it, or both; doc is the JSON, execData when it
// is not one JSON value.
//
//	go test ./internal/jsonfilter -run '^$' -fuzz FuzzTemplateDifferential -fuzztime 3m -parallel 1
//
// Where chatq differs on purpose (docs/testing.md lists it, README.md says
// it to users) the input is skipped, each class by its own test below, so
// that nothing else can hide behind it.
func FuzzTemplateDifferential(f *testing.F) {
	for _, tmpl := range execTable {
		f.Add(tmpl, execData, []byte(nil))
	}
	f.Add("", execData, []byte("range-if-with-index-printf"))
	f.Add("", `[1,2.5,"x",null,true,{"a":[]}]`, []byte{3, 7, 1, 200, 45, 9, 77, 13, 2, 250, 31})
	f.Fuzz(func(t *testing.T, tmpl, doc string, gen []byte) {
		text := tmpl + generate(gen)
		if _, err := DecodeOne([]byte(doc)); err != nil {
			// Few mutations of a document are JSON: one of fuzzDocs then.
			doc = fuzzDocs[len(text)%len(fuzzDocs)]
		}
		if why := notCompared(text, doc); why != "" {
			t.Skip(why)
		}
		got, gotClass, gotErr, typeNamed := runChatq(text, doc)
		want, wantClass, wantErr := runReference(text, doc)
		if why := deliberate(text, gotClass, wantClass, wantErr); why != "" {
			t.Skip(why)
		}
		if typeNamed && (gotClass != wantClass || got != want) {
			// A whole number is int64 in chatq's executor; in
			// text/template it is int when written in the template and
			// uint8 when a byte of a string. printf's %T, and its
			// complaint about a verb that does not fit (%!g(int64=-1)),
			// name the type.
			t.Skip("printf named a Go type")
		}
		if gotClass != wantClass || got != want {
			t.Errorf("template %q on %s:\nchatq:         %s %q %v\ntext/template: %s %q %v", text, doc, gotClass, got, gotErr, wantClass, want, wantErr)
		}
	})
}

// fuzzDocs are the documents an input that is not JSON is run on: nulls
// in arrays and objects (text/template tells a null member from a missing
// one), numbers of every kind, nothing.
var fuzzDocs = []string{
	execData,
	`[1,2.5,"x",null,true,{"a":[]},[null],-0.0]`,
	`{"a":{"b":null,"c":[null,{"d":null}]},"l":[null,[],{}],"s":"héllo\t<&>","n":-0,"e":1e-7,"big":1e21,"u":18446744073709551615,"m":{"":null," ":1}}`,
	`null`,
	`"text"`,
	`[[1,2],[3],[]]`,
	`{"list":[{"id":null,"rc":null},{"rc":1.5},{}],"name":null,"n":0,"f":-1.25,"ok":false}`,
}

// execTable is TestTemplateAsTextTemplate's templates and
// TestTemplateErrors', which the fuzzer starts from.
var execTable = []string{
	`{{.name}} {{.n}} {{.f}} {{.big}} {{.ok}} {{.none}} {{.missing}}`,
	`{{range .list}}{{.id}}={{.rc}};{{end}}`,
	`{{range $i, $m := .list}}{{$i}}:{{$m.id}} {{end}}`,
	`{{range $k, $v := .obj}}{{$k}}={{$v}} {{end}}`,
	`{{range .list}}{{if eq .rc 2}}{{continue}}{{end}}{{if gt .rc 2}}{{break}}{{end}}{{.id}}{{end}}`,
	`{{range .nothing}}x{{else}}nothing{{end}}`,
	`{{range 3}}{{.}}{{end}}`,
	`{{with .obj}}{{.a}}{{end}}{{with .none}}x{{else}}no{{end}}`,
	`{{if and .ok .n}}yes{{end}} {{if or .none .empty}}x{{else}}no{{end}} {{not .ok}}`,
	`{{and .n .none}} {{or .none .name}} {{and 1 2 3}}`,
	`{{$x := .n}}{{$x}}{{$x = 5}}{{$x}}`,
	`{{if eq .name "jobs" "other"}}eq{{end}} {{ne .n 2}} {{lt .n 4}} {{le .n 3}} {{ge .f 1.5}} {{gt .f 2.5}}`,
	`{{len .list}} {{len .name}} {{index .list 1 "id"}} {{index .obj "a"}} {{slice .name 1 3}}`,
	`{{printf "%s has %d, %.2f" .name .n .f}} {{print .name .n}} {{println .ok}}`,
	`{{.name | printf "%q"}} {{(index .list 0).id}} {{.list | len}}`,
	`{{define "row"}}[{{.id}}]{{end}}{{range .list}}{{template "row" .}}{{end}}`,
	`{{- /* a comment */ -}} {{ .name -}} !`,
	`{{$}}`,
	`{{.none.x}}`,
	`{{.name.x}}`,
	`{{range .name}}{{end}}`,
	`{{lt .name 1}}`,
	`{{index .list 9}}`,
	`{{template "nope"}}`,
	`{{timefmt "15:04" .ok}}`,
	`{{.name`,
	`{{nosuch .}}`,
	`{{end}}`,
	`{{call .x}}`,
	`{{$y}}`,
}

// fuzzNow is timeago's now in both executors: no wall clock in a test.
var fuzzNow = time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)

// fuzzFuncs is templateFuncs with timeago at fuzzNow.
func fuzzFuncs(tb *table) map[string]func([]any) (any, error) {
	funcs := templateFuncs(tb)
	funcs["timeago"] = func(a []any) (any, error) {
		if len(a) != 1 {
			return nil, fmt.Errorf("want one time")
		}
		return timeago(a[0], fuzzNow)
	}
	return funcs
}

// runChatq runs text on doc as Filter.Apply does, and says which class of
// outcome it was: "parse", "exec" or "ok"; typeNamed says that printf
// named a Go type (%T, or %!d(string=x) for a verb that does not fit).
func runChatq(text, doc string) (out, class string, err error, typeNamed bool) {
	f, err := Template(text)
	if err != nil {
		return "", "parse", err, false
	}
	v, _ := DecodeOne([]byte(doc))
	var buf bytes.Buffer
	tb := &table{w: &buf}
	funcs := fuzzFuncs(tb)
	funcs["printf"] = func(a []any) (any, error) {
		s, err := builtin("printf", a)
		if len(a) > 0 && strings.Contains(fmt.Sprint(a[0]), "T") || strings.Contains(fmt.Sprint(s), "%!") {
			typeNamed = true
		}
		return s, err
	}
	if err := execute(&buf, f.trees, funcs, templateValue(v)); err != nil {
		return "", "exec", err, typeNamed
	}
	tb.render()
	return buf.String(), "ok", nil, typeNamed
}

// runReference runs text on doc with text/template. The document is the
// value chatq's executor gets, with arrays and objects as jsonArray and
// jsonObject: Go types whose String is their JSON, as chatq prints them
// (text/template would print a map as map[a:1]). chatq's own functions are
// given to it as Go functions calling chatq's implementation, so what is
// compared for them is how the executor calls them.
func runReference(text, doc string) (out string, class string, err error) {
	var buf bytes.Buffer
	tb := &table{w: &buf}
	fm := template.FuncMap{}
	for name, fn := range fuzzFuncs(tb) {
		fm[name] = func(args ...any) (any, error) {
			for i := range args {
				args[i] = plain(args[i])
			}
			v, err := fn(args)
			return wrapped(v), err
		}
	}
	tt, err := template.New("--template").Funcs(fm).Parse(text)
	if err != nil {
		return "", "parse", err
	}
	v, _ := DecodeOne([]byte(doc))
	if err := tt.Execute(&buf, wrapped(templateValue(v))); err != nil {
		return "", "exec", err
	}
	tb.render()
	return buf.String(), "ok", nil
}

// wrapped is v with every array a jsonArray and every object a jsonObject,
// each with a capacity of its length (text/template slices up to a
// slice's capacity, which decoding leaves to chance).
func wrapped(v any) any {
	switch v := v.(type) {
	case []any:
		if v == nil {
			return jsonArray(nil)
		}
		out := make(jsonArray, len(v))
		for i := range v {
			out[i] = wrapped(v[i])
		}
		return out
	case jsonArray:
		return wrapped([]any(v))
	case map[string]any:
		out := make(jsonObject, len(v))
		for k := range v {
			out[k] = wrapped(v[k])
		}
		return out
	}
	return v
}

// plain undoes wrapped, and makes text/template's int (a number written in
// the template) the int64 that chatq's executor has for every whole number.
func plain(v any) any {
	switch v := v.(type) {
	case int:
		return int64(v)
	case jsonArray:
		if v == nil {
			return []any(nil)
		}
		out := make([]any, len(v))
		for i := range v {
			out[i] = plain(v[i])
		}
		return out
	case jsonObject:
		out := make(map[string]any, len(v))
		for k := range v {
			out[k] = plain(v[k])
		}
		return out
	}
	return v
}

// notCompared says why an input is not run at all: it could run for a
// very long time in both executors, or it meets the test's own artifice.
func notCompared(text, doc string) string {
	trees, err := parseTemplate(text)
	if err != nil {
		return ""
	}
	// A range over a large number (from the document or the template),
	// or ranges nested deep, would spend the fuzzing time in one input.
	ranges := 0
	for _, t := range trees {
		walkNodes(t.Root, func(n parse.Node) {
			switch n := n.(type) {
			case *parse.RangeNode:
				ranges++
			case *parse.NumberNode:
				if n.IsFloat && (n.Float64 > 20 || n.Float64 < -20) {
					ranges += 100
				}
			}
		})
	}
	if ranges > 3 || ranges > 0 && hasLargeNumber(doc) {
		return "ranges could run long"
	}
	// A template that calls itself nests at most 100 deep in chatq and
	// 100,000 in text/template, which can take a gigabyte of stack.
	if recursive(text) {
		return "a template that calls itself"
	}
	// The reference's jsonArray and jsonObject have a String method,
	// which text/template would call for .String.
	if strings.Contains(text, "String") {
		return "the reference's String method"
	}
	return ""
}

func hasLargeNumber(doc string) bool {
	v, _ := DecodeOne([]byte(doc))
	large := false
	var walk func(any)
	walk = func(v any) {
		switch v := templateValue(v).(type) {
		case int64:
			large = large || v > 20 || v < -20
		case []any:
			for _, e := range v {
				walk(e)
			}
		case map[string]any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(v)
	return large
}

// walkNodes calls fn on n and every node under it.
func walkNodes(n parse.Node, fn func(parse.Node)) {
	if n == nil || reflect.ValueOf(n).IsNil() {
		return
	}
	fn(n)
	switch n := n.(type) {
	case *parse.ListNode:
		for _, c := range n.Nodes {
			walkNodes(c, fn)
		}
	case *parse.ActionNode:
		walkNodes(n.Pipe, fn)
	case *parse.PipeNode:
		for _, c := range n.Cmds {
			walkNodes(c, fn)
		}
	case *parse.CommandNode:
		for _, a := range n.Args {
			walkNodes(a, fn)
		}
	case *parse.ChainNode:
		walkNodes(n.Node, fn)
	case *parse.IfNode:
		walkBranch(&n.BranchNode, fn)
	case *parse.WithNode:
		walkBranch(&n.BranchNode, fn)
	case *parse.RangeNode:
		walkBranch(&n.BranchNode, fn)
	case *parse.TemplateNode:
		walkNodes(n.Pipe, fn)
	}
}

func walkBranch(b *parse.BranchNode, fn func(parse.Node)) {
	walkNodes(b.Pipe, fn)
	walkNodes(b.List, fn)
	walkNodes(b.ElseList, fn)
}

// deliberate says why a difference between the executors is one chatq
// makes on purpose (README.md, "--jq and --template"), or "" when it is
// not one.
func deliberate(text, got, want string, wantErr error) string {
	if got == "parse" && want != "parse" && callsMissing(text) {
		// text/template's html, js, urlquery and call: escaping for web
		// pages, and calling Go functions JSON cannot hold.
		return "a function chatq does not have"
	}
	if want == "exec" && got != "exec" && strings.Contains(wantErr.Error(), "incompatible types for comparison") {
		// chatq compares a whole number with a fractional one (1 with
		// 1.5): which of the two a JSON number is depends on its digits.
		// (A byte of a string, index "abc" 0, is a whole number too.)
		if mixedNumberTypes(wantErr.Error()) {
			return "comparing whole and fractional numbers"
		}
	}
	if got == "exec" && want == "ok" && hasComplex(text) {
		// A JSON number is never complex: chatq has no complex numbers.
		return "a complex number"
	}
	return ""
}

func mixedNumberTypes(msg string) bool {
	_, types, _ := strings.Cut(msg, "incompatible types for comparison: ")
	a, b, _ := strings.Cut(types, " and ")
	isNum := func(s string) bool {
		switch s {
		case "int", "int64", "uint8", "float64", "jsonfilter.Number":
			return true
		}
		return false
	}
	return isNum(a) && isNum(b)
}

// missingFuncs are text/template's functions that chatq does not have.
var missingFuncs = []string{"html", "js", "urlquery", "call"}

// callsMissing says whether text calls one of missingFuncs.
func callsMissing(text string) bool {
	names := map[string]any{}
	for _, n := range append(builtinNames, missingFuncs...) {
		names[n] = true
	}
	for n := range templateFuncs(nil) {
		names[n] = true
	}
	trees, err := parse.Parse("--template", text, "", "", names)
	if err != nil {
		return false
	}
	found := false
	for _, t := range trees {
		walkNodes(t.Root, func(n parse.Node) {
			if n, ok := n.(*parse.IdentifierNode); ok && slices.Contains(missingFuncs, n.Ident) {
				found = true
			}
		})
	}
	return found
}

func hasComplex(text string) bool {
	trees, _ := parseTemplate(text)
	found := false
	for _, t := range trees {
		walkNodes(t.Root, func(n parse.Node) {
			if n, ok := n.(*parse.NumberNode); ok && n.IsComplex {
				found = true
			}
		})
	}
	return found
}

// recursive says whether a template of text calls itself, directly or not.
func recursive(text string) bool {
	trees, err := parseTemplate(text)
	if err != nil {
		return false
	}
	calls := map[string][]string{}
	for name, t := range trees {
		walkNodes(t.Root, func(n parse.Node) {
			if n, ok := n.(*parse.TemplateNode); ok {
				calls[name] = append(calls[name], n.Name)
			}
		})
	}
	state := map[string]int{} // 1 visiting, 2 done
	var cycle func(string) bool
	cycle = func(name string) bool {
		switch state[name] {
		case 1:
			return true
		case 2:
			return false
		}
		state[name] = 1
		for _, c := range calls[name] {
			if cycle(c) {
				return true
			}
		}
		state[name] = 2
		return false
	}
	for name := range trees {
		if cycle(name) {
			return true
		}
	}
	return false
}

// generator builds a template from bytes by a small grammar of what
// --template users write: text, actions with pipelines over fields,
// variables, literals and every function chatq has, if/with/range with
// else, break and continue, define and template. Each choice takes a byte;
// past the end of the bytes every choice is the first (so it ends).
type generator struct {
	b     []byte
	i     int
	vars  []string
	loops int
	out   strings.Builder
}

func generate(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	g := &generator{b: b}
	if g.next()%4 == 0 {
		g.out.WriteString(`{{define "t"}}`)
		g.list(2)
		g.out.WriteString(`{{end}}`)
	}
	g.list(3)
	return g.out.String()
}

func (g *generator) next() int {
	if g.i >= len(g.b) {
		return 0
	}
	g.i++
	return int(g.b[g.i-1])
}

func (g *generator) pick(options ...string) string { return options[g.next()%len(options)] }

func (g *generator) list(depth int) {
	for n := g.next() % 4; n >= 0 && g.i < len(g.b); n-- {
		g.item(depth)
	}
}

func (g *generator) open() string  { return g.pick("{{", "{{", "{{- ") }
func (g *generator) close() string { return g.pick("}}", "}}", " -}}") }

func (g *generator) item(depth int) {
	c := g.next() % 12
	if depth <= 0 {
		c %= 3
	}
	w := &g.out
	switch c {
	case 0:
		w.WriteString(g.pick(" ", "x", "\n", ";", "a b", "\t"))
	case 1, 2:
		w.WriteString(g.open())
		g.pipeline(2, true)
		w.WriteString(g.close())
	case 3, 4:
		kw := g.pick("if", "with")
		w.WriteString(g.open() + kw + " ")
		mark := len(g.vars)
		g.pipeline(2, true)
		w.WriteString(g.close())
		g.list(depth - 1)
		switch g.next() % 3 {
		case 1:
			w.WriteString("{{else}}")
			g.list(depth - 1)
		case 2:
			w.WriteString("{{else " + kw + " ")
			g.pipeline(1, false)
			w.WriteString("}}")
			g.list(depth - 1)
		}
		w.WriteString("{{end}}")
		g.vars = g.vars[:mark]
	case 5, 6:
		w.WriteString(g.open() + "range ")
		mark := len(g.vars)
		switch g.next() % 4 {
		case 1:
			v := g.newVar()
			w.WriteString(v + " := ")
			g.vars = append(g.vars, v)
		case 2:
			k := g.newVar()
			g.vars = append(g.vars, k)
			v := g.newVar()
			g.vars = append(g.vars, v)
			w.WriteString(k + ", " + v + " := ")
		}
		g.pipeline(1, false)
		w.WriteString(g.close())
		g.loops++
		g.list(depth - 1)
		g.loops--
		if g.next()%3 == 0 {
			w.WriteString("{{else}}")
			g.list(depth - 1)
		}
		w.WriteString("{{end}}")
		g.vars = g.vars[:mark]
	case 7:
		if g.loops > 0 {
			w.WriteString(g.pick("{{break}}", "{{continue}}"))
		} else {
			w.WriteString("{{/* c */}}")
		}
	case 8:
		w.WriteString(`{{template "t" `)
		g.operand(1)
		w.WriteString("}}")
	case 9:
		w.WriteString(`{{tablerow `)
		g.operand(1)
		w.WriteString(" ")
		g.operand(1)
		w.WriteString("}}")
	default:
		w.WriteString(g.open())
		g.pipeline(2, true)
		w.WriteString(g.close())
	}
}

func (g *generator) newVar() string {
	return fmt.Sprintf("$v%d", len(g.vars))
}

// pipeline writes a pipeline: a command, perhaps declared into a
// variable, perhaps piped on.
func (g *generator) pipeline(depth int, decl bool) {
	w := &g.out
	if decl {
		switch g.next() % 6 {
		case 1:
			v := g.newVar()
			w.WriteString(v + " := ")
			g.vars = append(g.vars, v)
		case 2:
			if len(g.vars) > 0 {
				w.WriteString(g.vars[g.next()%len(g.vars)] + " = ")
			}
		}
	}
	g.command(depth)
	for g.next()%4 == 3 {
		w.WriteString(" | ")
		w.WriteString(g.pick("len", "print", "printf \"%v\"", "not", "index .obj", "eq 1", "join \",\"", "println", "and 1", "or 0", "truncate 3", "slice \"abc\" 1", "printf \"%d\""))
	}
}

var funcNames = []string{"len", "index", "slice", "eq", "ne", "lt", "le", "gt", "ge", "and", "or", "not", "print", "printf", "println", "join", "pluck", "truncate", "timefmt", "timeago"}

func (g *generator) command(depth int) {
	if depth <= 0 || g.next()%3 == 0 {
		g.operand(depth)
		return
	}
	w := &g.out
	name := g.pick(funcNames...)
	w.WriteString(name)
	if name == "printf" {
		w.WriteString(" " + g.pick(`"%v"`, `"%s"`, `"%d"`, `"%q"`, `"%.2f"`, `"%x"`, `"%5v|%v"`, `"%v %v"`, `"%g"`, `"%e"`, `"%c"`, `"%t"`, `"%#v"`, `"%%"`))
	}
	for n := g.next() % 4; n > 0; n-- {
		w.WriteString(" ")
		g.operand(depth - 1)
	}
}

var fieldNames = []string{"name", "n", "f", "big", "ok", "none", "empty", "list", "obj", "words", "id", "rc", "a", "z", "missing", "x"}

func (g *generator) field() string { return "." + g.pick(fieldNames...) }

func (g *generator) operand(depth int) {
	w := &g.out
	c := g.next() % 10
	if depth <= 0 && c >= 8 {
		c = 0
	}
	switch c {
	case 0:
		w.WriteString(g.field())
		if g.next()%3 == 0 {
			w.WriteString(g.field())
		}
	case 1:
		w.WriteString(".")
	case 2:
		if len(g.vars) == 0 {
			w.WriteString("$")
		} else {
			w.WriteString(g.vars[g.next()%len(g.vars)])
		}
		if g.next()%3 == 0 {
			w.WriteString(g.field())
		}
	case 3, 4:
		w.WriteString(g.pick("0", "1", "2", "-1", "3", "1.5", "1e21", "0.00001", "1e3", "0x10", "'a'", "1.0", "-0.0", "18446744073709551615", "2i"))
	case 5, 6:
		w.WriteString(g.pick(`"a"`, `"x"`, `""`, `"id"`, "`b`", `"2006-01-02"`, `"<&>"`, "true", "false", "nil"))
	default:
		w.WriteString("(")
		g.pipeline(depth-1, false)
		w.WriteString(")")
		if g.next()%4 == 0 {
			w.WriteString(g.field())
		}
	}
}
