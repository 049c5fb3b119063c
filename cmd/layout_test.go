package cmd

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/chatq-dev/chatq/"

// imports returns the imports of the non-test Go files in dir.
func imports(t *testing.T, dir string) map[string]bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, im := range af.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			out[p] = true
		}
	}
	return out
}

// The layout rules: a command group imports no other group and no root
// command code; internal/cli/cmdutil imports no group; pkg/* import no cobra,
// viper or os.
func TestLayout(t *testing.T) {
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var groups []string
	for _, e := range entries {
		if e.IsDir() && e.Name() != "testdata" {
			groups = append(groups, e.Name())
		}
	}
	if len(groups) < 6 {
		t.Fatalf("found only the groups %v", groups)
	}
	for _, g := range groups {
		for p := range imports(t, g) {
			if p == module+"cmd" || strings.HasPrefix(p, module+"cmd/") {
				t.Errorf("cmd/%s imports %s: a group imports internal/cli/cmdutil and pkg/*, never another group", g, p)
			}
		}
	}
	for p := range imports(t, "../internal/cli/cmdutil") {
		if strings.HasPrefix(p, module+"cmd") {
			t.Errorf("internal/cli/cmdutil imports %s", p)
		}
	}
	for _, pkg := range []string{"chat", "delayq", "shardlist"} {
		for p := range imports(t, "../pkg/"+pkg) {
			if p == "os" || strings.HasPrefix(p, "github.com/spf13/") {
				t.Errorf("pkg/%s imports %s", pkg, p)
			}
		}
	}
}
