package e2e

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/chatq-dev/chatq/cmd"
	"github.com/spf13/cobra"
)

// TestREADMEJSONContract: the README's JSON table names every command, so
// that a new command's JSON shape is part of the written contract.
func TestREADMEJSONContract(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "## The JSON contract")
	if !ok {
		t.Fatal("README.md has no JSON contract section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	listed := map[string]bool{}
	code := regexp.MustCompile("`([^`]+)`")
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 3 {
			continue
		}
		// "`queue stats`, `create`, `set`": a bare name is in the group of
		// the name before it.
		group := ""
		for _, m := range code.FindAllStringSubmatch(cells[1], -1) {
			var words []string // "top --once" names top
			for _, w := range strings.Fields(m[1]) {
				if !strings.HasPrefix(w, "-") {
					words = append(words, w)
				}
			}
			name := strings.Join(words, " ")
			if g, _, ok := strings.Cut(name, " "); ok {
				group = g
			} else if group != "" {
				name = group + " " + name
			}
			listed[name] = true
		}
	}
	if strings.Contains(section, "`completion` prints a shell script") {
		listed["completion"] = true
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if sub.Hidden || sub.Name() == "help" || strings.HasPrefix(sub.Name(), "__") {
				continue
			}
			name := strings.TrimPrefix(sub.CommandPath(), "chatq ")
			if sub.HasSubCommands() && name != "completion" {
				walk(sub)
				continue
			}
			if !listed[name] {
				t.Errorf("README.md's JSON contract does not list `%s`", name)
			}
		}
	}
	root := cmd.Command()
	root.InitDefaultCompletionCmd()
	walk(root)
}
