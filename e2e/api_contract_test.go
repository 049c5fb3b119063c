package e2e

import (
	"context"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chatq-dev/chatq/pkg/chat"
	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/chatq-dev/chatq/pkg/shardlist"
	"github.com/redis/go-redis/v9"
)

// A program outside the module can tell a bad name from other failures
// with each package's own ErrInvalid (it cannot import internal/base/names),
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
	if _, err := shardlist.New(rdb, shardlist.Options{}).RPush(ctx, "a{b}", "x"); !errors.Is(err, shardlist.ErrInvalid) {
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

// chat, delayq and shardlist have the shape the three packages agree on
// (decisions of issue 23): a Client from New(rdb, Options) with no error, listing in
// SCAN-style pages, and the same Access table type.
var (
	_ func(redis.UniversalClient, chat.Options) *chat.Client           = chat.New
	_ func(redis.UniversalClient, shardlist.Options) *shardlist.Client = shardlist.New
	_ func(redis.UniversalClient, delayq.Options) *delayq.Client       = delayq.New

	_ func(*chat.Client, context.Context, uint64, string, int64) ([]string, uint64, error)      = (*chat.Client).Chats
	_ func(*shardlist.Client, context.Context, uint64, string, int64) ([]string, uint64, error) = (*shardlist.Client).Lists
	_ func(*delayq.Client, context.Context, uint64, string, int64) ([]string, uint64, error)    = (*delayq.Client).Queues

	_ func(*chat.Client) []chat.Access           = (*chat.Client).Access
	_ func(*shardlist.Client) []shardlist.Access = (*shardlist.Client).Access
	_ func(*delayq.Client) []delayq.Access       = (*delayq.Client).Access
	_                                            = shardlist.Access(chat.Access{}) // the same fields
	_                                            = delayq.Access(chat.Access{})
)

// apiPackages are the packages held to the API rules below.
var apiPackages = []string{"pkg/chat", "pkg/delayq", "pkg/shardlist"}

// Each package exports at most 55 identifiers (types, functions, methods,
// vars and consts; not the Error, Unwrap and Is methods by which a type is
// an error, which a reader learns with the type), and no exported
// declaration names an internal package (`go doc` would show a name no
// other module can use). The budget was 50 until delayq.QueueError (which
// queue an error is about) and the tokens of idempotent writes.
func TestPackagesAPI(t *testing.T) {
	for _, dir := range apiPackages {
		fset := token.NewFileSet()
		pkgs, err := parser.ParseDir(fset, dir, func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
		if err != nil {
			t.Fatal(err)
		}
		var exported []string
		for _, p := range pkgs {
			for _, f := range p.Files {
				internal := map[string]bool{} // import names of internal packages
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
				namesInternal := func(n ast.Node, what string) {
					ast.Inspect(n, func(n ast.Node) bool {
						if sel, ok := n.(*ast.SelectorExpr); ok {
							if x, ok := sel.X.(*ast.Ident); ok && internal[x.Name] {
								t.Errorf("%s: %s names %s.%s, an internal package", dir, what, x.Name, sel.Sel.Name)
							}
						}
						return true
					})
				}
				for _, d := range f.Decls {
					switch d := d.(type) {
					case *ast.FuncDecl:
						if !d.Name.IsExported() || !exportedRecv(d) || errorMethod(d) {
							continue
						}
						exported = append(exported, d.Name.Name)
						namesInternal(d.Type, d.Name.Name)
					case *ast.GenDecl:
						for _, s := range d.Specs {
							switch s := s.(type) {
							case *ast.TypeSpec:
								if s.Name.IsExported() {
									exported = append(exported, s.Name.Name)
									namesInternal(s.Type, s.Name.Name)
								}
							case *ast.ValueSpec:
								for i, n := range s.Names {
									if n.IsExported() {
										exported = append(exported, n.Name)
										if i < len(s.Values) {
											namesInternal(s.Values[i], n.Name)
										}
										if s.Type != nil {
											namesInternal(s.Type, n.Name)
										}
									}
								}
							}
						}
					}
				}
			}
		}
		if len(exported) > 55 {
			t.Errorf("%s exports %d identifiers, more than 55", dir, len(exported))
		}
	}
}

// errorMethod reports whether a function is a method by which its type
// is an error (Error, Unwrap, Is).
func errorMethod(d *ast.FuncDecl) bool {
	switch d.Name.Name {
	case "Error", "Unwrap", "Is":
		return d.Recv != nil
	}
	return false
}

// exportedRecv reports whether a function is one, or a method of an
// exported type.
func exportedRecv(d *ast.FuncDecl) bool {
	if d.Recv == nil {
		return true
	}
	typ := d.Recv.List[0].Type
	if s, ok := typ.(*ast.StarExpr); ok {
		typ = s.X
	}
	id, ok := typ.(*ast.Ident)
	return ok && id.IsExported()
}
