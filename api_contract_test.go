package main

import (
	"context"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chatq-dev/chatq/pkg/chat"
	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/chatq-dev/chatq/pkg/shardlist"
	"github.com/redis/go-redis/v9"
)

// A program outside the module can tell a bad name from other failures
// with each package's own ErrInvalid (it cannot import internal/names),
// and the constructors agree: none returns an error.
func TestPackagesErrInvalid(t *testing.T) {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // never reached
	defer rdb.Close()

	_, err := chat.New(rdb, chat.Options{}).Send(ctx, "a b", "joe", "hi")
	if !errors.Is(err, chat.ErrInvalid) {
		t.Errorf("chat: bad chat id: %v, want chat.ErrInvalid", err)
	}
	_, err = chat.New(rdb, chat.Options{}).Members(ctx, "{x}")
	if !errors.Is(err, chat.ErrInvalid) {
		t.Errorf("chat: bad chat id: %v, want chat.ErrInvalid", err)
	}
	_, err = delayq.New(rdb, delayq.Options{}).Push(ctx, "no spaces", "x", delayq.PushOptions{})
	if !errors.Is(err, delayq.ErrInvalid) {
		t.Errorf("delayq: bad queue name: %v, want delayq.ErrInvalid", err)
	}
	l := shardlist.New(rdb, "a{b}", shardlist.Options{})
	if !errors.Is(l.Err(), shardlist.ErrInvalid) {
		t.Errorf("shardlist: bad key: Err() = %v, want shardlist.ErrInvalid", l.Err())
	}
	if _, err := l.RPush(ctx, "x"); !errors.Is(err, shardlist.ErrInvalid) {
		t.Errorf("shardlist: bad key: RPush: %v, want shardlist.ErrInvalid", err)
	}
}

// The package examples are what a user copies: they import nothing from
// internal/, which Go forbids outside the module.
func TestExamplesUsePublicImportsOnly(t *testing.T) {
	files, _ := filepath.Glob("pkg/*/example*_test.go")
	more, _ := filepath.Glob("examples/*/*.go")
	files = append(files, more...)
	if len(files) < 3 {
		t.Fatalf("found only %d example files", len(files))
	}
	for _, f := range files {
		af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range af.Imports {
			if strings.Contains(imp.Path.Value, "/internal/") {
				t.Errorf("%s imports %s, which a program outside the module cannot", f, imp.Path.Value)
			}
		}
	}
}

// pkg/delayq stays small enough to guess (issue 23): at most 50 exported
// identifiers, methods included, and no exported declaration shows an
// internal package in go doc (ErrInvalid = names.ErrInvalid did).
func TestDelayqAPISize(t *testing.T) {
	const limit = 50
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, "pkg/delayq", func(fi os.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, 0)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range pkgs {
		for _, f := range p.Files {
			internal := map[string]bool{}
			for _, imp := range f.Imports {
				path := strings.Trim(imp.Path.Value, `"`)
				if strings.Contains(path, "/internal/") {
					name := path[strings.LastIndex(path, "/")+1:]
					if imp.Name != nil {
						name = imp.Name.Name
					}
					internal[name] = true
				}
			}
			for _, d := range f.Decls {
				switch d := d.(type) {
				case *ast.FuncDecl:
					if !d.Name.IsExported() {
						continue
					}
					if d.Recv == nil {
						names = append(names, d.Name.Name)
						continue
					}
					typ := d.Recv.List[0].Type
					if s, ok := typ.(*ast.StarExpr); ok {
						typ = s.X
					}
					if id, ok := typ.(*ast.Ident); ok && id.IsExported() {
						names = append(names, id.Name+"."+d.Name.Name)
					}
				case *ast.GenDecl:
					for _, s := range d.Specs {
						switch s := s.(type) {
						case *ast.TypeSpec:
							if s.Name.IsExported() {
								names = append(names, s.Name.Name)
							}
						case *ast.ValueSpec:
							for _, n := range s.Names {
								if !n.IsExported() {
									continue
								}
								names = append(names, n.Name)
								ast.Inspect(s, func(x ast.Node) bool {
									if sel, ok := x.(*ast.SelectorExpr); ok {
										if id, ok := sel.X.(*ast.Ident); ok && internal[id.Name] {
											t.Errorf("%s: %s is declared with %s.%s, an internal package's", fset.Position(s.Pos()), n.Name, id.Name, sel.Sel.Name)
										}
									}
									return true
								})
							}
						}
					}
				}
			}
		}
	}
	if len(names) > limit {
		slices.Sort(names)
		t.Errorf("pkg/delayq exports %d identifiers, more than %d: %s", len(names), limit, strings.Join(names, " "))
	}
	if len(names) < 10 {
		t.Fatalf("pkg/delayq: only %d exported identifiers found", len(names))
	}
}
