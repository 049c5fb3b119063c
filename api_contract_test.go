package main

import (
	"context"
	"errors"
	"go/parser"
	"go/token"
	"path/filepath"
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
