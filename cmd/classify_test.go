package cmd

import (
	"strings"
	"testing"

	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/cli/iostreams"
	"github.com/spf13/cobra"
)

// Every runnable leaf of the tree declares in its constructor whether it
// writes (cmdutil.MarkWrite) or not (cmdutil.MarkRead), so that a new
// write command cannot silently exit 1 where a lost reply must exit 4; and
// a write's check is a chatq command line.
func TestEveryLeafClassified(t *testing.T) {
	f := &cmdutil.Factory{IO: &iostreams.IOStreams{}, Getenv: func(string) string { return "" }}
	root := newRootCmd(f)
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	leaves := 0
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		if !c.Runnable() || c.HasSubCommands() || skipClassify(c) {
			return
		}
		leaves++
		writes, ok := cmdutil.Classified(c)
		if !ok {
			t.Errorf("%s: declare in its constructor whether it writes: cmdutil.MarkWrite(cmd, check) or cmdutil.MarkRead(cmd)", c.CommandPath())
			return
		}
		if writes {
			if check := c.Annotations["chatq.write"]; !strings.HasPrefix(check, "chatq ") {
				t.Errorf("%s: MarkWrite's check %q is not a chatq command line", c.CommandPath(), check)
			}
		}
	}
	walk(root)
	if leaves < 40 {
		t.Fatalf("walked only %d leaves", leaves)
	}
}

// skipClassify: cobra's own commands (help, completion) need no server.
func skipClassify(c *cobra.Command) bool {
	for p := c; p != nil; p = p.Parent() {
		switch p.Name() {
		case "help", "completion", cobra.ShellCompRequestCmd, cobra.ShellCompNoDescRequestCmd:
			return true
		}
	}
	return false
}
