// Command gendocs writes chatq's man pages and shell completions, which the
// release packages carry, and docs/keys.md's key → script table, from the
// KEYS lines that open every Lua script:
//
//	go run ./tools/gendocs -out dist-assets
//	go run ./tools/gendocs -keys docs/keys.md
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/chatq-dev/chatq/cmd"
	"github.com/spf13/cobra/doc"
)

func main() {
	out := flag.String("out", "dist-assets", "directory to write man/ and completions/ into")
	keys := flag.String("keys", "", "rewrite the generated part of this file (docs/keys.md) from the scripts under the current directory, and nothing else")
	flag.Parse()
	if *keys != "" {
		if err := writeKeys(".", *keys); err != nil {
			fmt.Fprintln(os.Stderr, "gendocs:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*out); err != nil {
		fmt.Fprintln(os.Stderr, "gendocs:", err)
		os.Exit(1)
	}
}

func run(out string) error {
	root := cmd.Command()
	root.DisableAutoGenTag = true
	root.InitDefaultCompletionCmd()
	man := filepath.Join(out, "man")
	comp := filepath.Join(out, "completions")
	for _, d := range []string{man, comp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	// No Title: each page is titled by its command (CHATQ-QUEUE-PUSH(1)),
	// as man and apropos list it; a fixed one would title every page CHATQ(1).
	if err := doc.GenManTree(root, &doc.GenManHeader{Section: "1", Source: "chatq", Manual: "chatq manual"}, man); err != nil {
		return err
	}
	gens := map[string]func(string) error{
		"chatq.bash": func(p string) error { return root.GenBashCompletionFileV2(p, true) },
		"_chatq":     root.GenZshCompletionFile,
		"chatq.fish": func(p string) error { return root.GenFishCompletionFile(p, true) },
		"chatq.ps1":  root.GenPowerShellCompletionFileWithDesc,
	}
	for name, gen := range gens {
		if err := gen(filepath.Join(comp, name)); err != nil {
			return err
		}
	}
	return nil
}
