package cmdutil

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/chatq-dev/chatq/internal/cli/conn"
	"github.com/spf13/cobra"
)

// completionTimeout bounds the server look-ups behind shell completion: a
// slow or absent server must not hang the user's shell.
const completionTimeout = 500 * time.Millisecond

// completionTimeoutEnv lifts or changes that bound (a duration; 0 means no
// bound). Tests set it: on a loaded machine 500 ms can pass before a
// Cluster client has loaded its slot map, and no test may depend on a
// wall-clock budget.
const completionTimeoutEnv = "CHATQ_COMPLETION_TIMEOUT"

// completionLimit is the bound on completion's look-ups, from
// CHATQ_COMPLETION_TIMEOUT or the default; 0 means none.
func (f *Factory) completionLimit() time.Duration {
	s := f.Getenv(completionTimeoutEnv)
	if s == "" {
		return completionTimeout
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		cobra.CompErrorln(fmt.Sprintf("%s=%q: want a duration such as 500ms or 0 (no limit); using %s", completionTimeoutEnv, s, completionTimeout))
		return completionTimeout
	}
	return d
}

// CompleteFromServer makes a cobra completion function that asks the server
// for names with list; any failure completes nothing.
func (f *Factory) CompleteFromServer(list func(ctx context.Context, f *Factory, cmd *cobra.Command) ([]string, error)) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		// The root's hook loaded a configuration for __complete itself, which
		// has not seen the flags on the line being completed: load it again.
		cfg, err := conn.LoadConfig(cmd.Flags(), f.Getenv)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ctx := context.Background()
		if limit := f.completionLimit(); limit > 0 {
			cfg.Timeout = min(cfg.Timeout, limit)
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, limit)
			defer cancel()
		}
		f.cfg = cfg
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

// CompleteFirstArg completes a command's first argument with the names list
// returns, and nothing after it.
func (f *Factory) CompleteFirstArg(list func(ctx context.Context, f *Factory, cmd *cobra.Command) ([]string, error)) cobra.CompletionFunc {
	fromServer := f.CompleteFromServer(list)
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return fromServer(cmd, args, toComplete)
	}
}

// CompleteNothing is the shell completion for free-form arguments.
func CompleteNothing(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	return nil, cobra.ShellCompDirectiveNoFileComp
}

// CompleteFlagValues completes the values of the named flags, on every
// subcommand of group that has one, with the names list returns (queue
// names for --dead-letter, users for --from). The value of a list flag
// (--to jeff,je) completes its last part.
func (f *Factory) CompleteFlagValues(group *cobra.Command, list func(ctx context.Context, f *Factory, cmd *cobra.Command) ([]string, error), flags ...string) {
	fromServer := f.CompleteFromServer(list)
	for _, sub := range group.Commands() {
		for _, name := range flags {
			fl := sub.Flags().Lookup(name)
			if fl == nil {
				continue
			}
			fn := fromServer
			if strings.HasSuffix(fl.Value.Type(), "Slice") {
				fn = lastOfList(fromServer)
			}
			if err := sub.RegisterFlagCompletionFunc(name, fn); err != nil {
				panic(err) // registered twice: a programming error
			}
		}
	}
}

// lastOfList completes the part of a comma-separated value after its last
// comma, keeping what comes before.
func lastOfList(fn cobra.CompletionFunc) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		head := ""
		if i := strings.LastIndex(toComplete, ","); i >= 0 {
			head, toComplete = toComplete[:i+1], toComplete[i+1:]
		}
		names, d := fn(cmd, args, toComplete)
		for i := range names {
			names[i] = head + names[i]
		}
		return names, d
	}
}

// Pager is a listing in bounded pages, go-redis SCAN style, such as
// chat.Client.Chats or shardlist.Client.Lists.
type Pager func(ctx context.Context, cursor uint64, match string, count int64) ([]string, uint64, error)

// PagedLister lists the names the Pager that pages returns finds, page by
// page (SCAN COUNT 1000 each) until the listing ends or 1000 names are
// found: the names of chats, users or lists to complete.
func PagedLister(pages func(f *Factory) (Pager, error)) func(ctx context.Context, f *Factory, cmd *cobra.Command) ([]string, error) {
	return func(ctx context.Context, f *Factory, cmd *cobra.Command) ([]string, error) {
		page, err := pages(f)
		if err != nil {
			return nil, err
		}
		seen := map[string]bool{}
		var out []string
		for cursor := uint64(0); ; {
			names, next, err := page(ctx, cursor, "", 1000)
			if err != nil {
				return out, err
			}
			for _, n := range names {
				if !seen[n] && len(out) < 1000 {
					seen[n] = true
					out = append(out, n)
				}
			}
			if cursor = next; cursor == 0 || len(out) >= 1000 {
				return out, nil
			}
		}
	}
}
