package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestKeysTable fails when docs/keys.md's generated part is not what the
// scripts' KEYS lines say (run go run ./tools/gendocs -keys docs/keys.md),
// or a script reads KEYS without naming them (awaitingHeaders aside).
func TestKeysTable(t *testing.T) {
	root := filepath.Join("..", "..")
	keys, unnamed, err := scriptKeys(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) == 0 {
		t.Fatal("no script names its keys")
	}
	for _, s := range unnamed {
		if !slices.Contains(positional, s) {
			t.Errorf("%s reads KEYS with no KEYS lines naming them", s)
		}
	}
	for _, s := range positional {
		if !slices.Contains(unnamed, s) {
			t.Errorf("%s is in positional but reads no KEYS, or names them", s)
		}
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "keys.md"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := replaceGenerated(doc, []byte(keysTable(keys)))
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != string(doc) {
		t.Errorf("docs/keys.md's key table differs from the scripts' KEYS lines: run go run ./tools/gendocs -keys docs/keys.md")
	}
}

// The header's format: fields two spaces apart, the local line after.
func TestKeyHeader(t *testing.T) {
	src := "-- x: a script.\n" +
		"-- KEYS[1] queue  <ns>:<q>  ZSET  id -> visible-at ms\n" +
		"-- KEYS[2..] shards  {KEY}:<n>  LIST  the shards, optional\n" +
		"local queue = KEYS[1]\n"
	got, err := keyHeader("pkg/x/x.lua", src)
	if err != nil {
		t.Fatal(err)
	}
	want := []scriptKey{
		{"pkg/x/x.lua", "1", "queue", "<ns>:<q>", "ZSET", "id -> visible-at ms"},
		{"pkg/x/x.lua", "2..", "shards", "{KEY}:<n>", "LIST", "the shards, optional"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	for _, bad := range []string{
		"-- KEYS[1] queue <ns>:<q> ZSET id\nlocal queue = KEYS[1]\n",
		"-- KEYS[1] queue  <ns>:<q>  ZSET  id\nlocal q = KEYS[1]\n",
		"-- KEYS[1] queue  <ns>:<q>  ZSET  id\n",
		"-- KEYS[1] queue  <ns>:<q>  ZSET  id\nlocal queue = KEYS[1]\nreturn KEYS[1]\n",
	} {
		if _, err := keyHeader("x.lua", bad); err == nil || !strings.Contains(err.Error(), "x.lua:") {
			t.Errorf("%q: error %v, want one naming the line", bad, err)
		}
	}
}
