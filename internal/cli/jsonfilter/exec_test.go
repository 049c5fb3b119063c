package jsonfilter

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"text/template"
)

const execData = `{"name":"jobs","n":3,"f":1.5,"big":1795266822123,"ok":true,"none":null,"empty":"",
 "list":[{"id":"a","rc":1},{"id":"b","rc":2},{"id":"c","rc":3}],"obj":{"z":1,"a":2},"words":["x","y"]}`

// The templates run here as text/template runs them (text/template itself,
// in this test only, is the reference).
func TestTemplateAsTextTemplate(t *testing.T) {
	for _, tmpl := range []string{
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
	} {
		got, err := runTemplate(tmpl, execData)
		if err != nil {
			t.Errorf("%s: %v", tmpl, err)
			continue
		}
		want := reference(t, tmpl, execData)
		if strings.Contains(tmpl, "{{$}}") {
			want = `{"big":1795266822123,"empty":"","f":1.5,"list":[{"id":"a","rc":1},{"id":"b","rc":2},{"id":"c","rc":3}],"n":3,"name":"jobs","none":null,"obj":{"a":2,"z":1},"ok":true,"words":["x","y"]}`
		}
		if got != want {
			t.Errorf("%s:\n got %q\nwant %q", tmpl, got, want)
		}
	}
}

func runTemplate(tmpl, data string) (string, error) {
	f, err := Template(tmpl)
	if err != nil {
		return "", err
	}
	var out bytes.Buffer
	err = f.Apply(&out, []byte(data), false)
	return out.String(), err
}

// reference runs tmpl with text/template on data decoded as Template does.
func reference(t *testing.T, tmpl, data string) string {
	t.Helper()
	v, err := DecodeOne([]byte(data))
	if err != nil {
		t.Fatal(err)
	}
	tt, err := template.New("ref").Parse(tmpl)
	if err != nil {
		t.Fatalf("%s: %v", tmpl, err)
	}
	var out bytes.Buffer
	if err := tt.Execute(&out, templateValue(v)); err != nil {
		t.Fatalf("%s: text/template: %v", tmpl, err)
	}
	return out.String()
}

// What cannot be done says what was wrong with the value, in JSON's words,
// and where.
func TestTemplateErrors(t *testing.T) {
	for _, tt := range []struct{ tmpl, want string }{
		{`{{.none.x}}`, `at <.none.x>: .none is null, so it has no field x`},
		{`{{.name.x}}`, `.name is a string, which has no fields (asked for x)`},
		{`{{range .name}}{{end}}`, `range can't iterate over a string`},
		{`{{lt .name 1}}`, `lt: can't compare a string with a number`},
		{`{{index .list 9}}`, `index: index 9 out of range of 3`},
		{`{{template "nope"}}`, `no template "nope"`},
		{`{{timefmt "15:04" .ok}}`, `not a time`},
	} {
		_, err := runTemplate(tt.tmpl, execData)
		var re *RuntimeError
		if !errors.As(err, &re) || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "interface") {
			t.Errorf("%s: %v, want %q", tt.tmpl, err, tt.want)
		}
	}
	for _, bad := range []string{`{{.name`, `{{nosuch .}}`, `{{end}}`, `{{call .x}}`, `{{$y}}`} {
		if _, err := Template(bad); err == nil || !strings.HasPrefix(err.Error(), "invalid --template: ") {
			t.Errorf("%s: %v", bad, err)
		}
	}
}
