package cmd

import (
	"context"
	"strings"
	"time"

	"github.com/chatq-dev/chatq/internal/keyspace"
	"github.com/spf13/cobra"
)

// completionTimeout bounds the server look-ups behind shell completion: a
// slow or absent server must not hang the user's shell.
const completionTimeout = 500 * time.Millisecond

// completeFromServer makes a cobra completion function that asks the server
// for names with list. Completion runs without the root's PersistentPreRunE,
// so it loads the configuration itself; any failure completes nothing.
func (f *Factory) completeFromServer(list func(ctx context.Context, f *Factory, cmd *cobra.Command) ([]string, error)) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if f.cfg == nil {
			cfg, err := loadConfig(cmd.Root().PersistentFlags(), f.Getenv)
			if err != nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			cfg.Timeout = min(cfg.Timeout, completionTimeout)
			f.cfg = cfg
		}
		ctx, cancel := context.WithTimeout(context.Background(), completionTimeout)
		defer cancel()
		names, err := list(ctx, f, cmd)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		out := names[:0]
		for _, n := range names {
			if strings.HasPrefix(n, toComplete) {
				out = append(out, n)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// scanNames returns the part of each key matching pattern (a SCAN glob whose
// only wildcard is one '*') that the '*' stood for, at most 1000 of them.
func scanNames(ctx context.Context, f *Factory, pattern string) ([]string, error) {
	c, err := f.Client()
	if err != nil {
		return nil, err
	}
	before, after, _ := strings.Cut(pattern, "*")
	iter := c.Scan(ctx, 0, keyspace.Quote(f.Prefix())+pattern, 1000).Iterator()
	seen := map[string]bool{}
	var out []string
	for iter.Next(ctx) && len(out) < 1000 {
		k := strings.TrimPrefix(iter.Val(), f.Prefix())
		if !strings.HasPrefix(k, before) || !strings.HasSuffix(k, after) || len(k) < len(before)+len(after) {
			continue
		}
		name := k[len(before) : len(k)-len(after)]
		if !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	return out, iter.Err()
}
