package cmdutil

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/chatq-dev/chatq/internal/conn"
	"github.com/chatq-dev/chatq/internal/keyspace"
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

// scanNames returns the hash tags (the part between '{' and '}') of the keys
// under the prefix that match pattern, on every cluster master, at most 1000
// of them: the chat ids of "chat:{*}", the list keys of "{*}:*".
func scanNames(ctx context.Context, f *Factory, pattern string) ([]string, error) {
	c, err := f.Client()
	if err != nil {
		return nil, err
	}
	keys, err := keyspace.Scan(ctx, c, keyspace.Quote(f.Prefix())+pattern, 10000)
	seen := map[string]bool{}
	var out []string
	for _, key := range keys {
		k := strings.TrimPrefix(key, f.Prefix())
		_, rest, ok := strings.Cut(k, "{")
		name, _, ok2 := strings.Cut(rest, "}")
		if ok && ok2 && name != "" && !seen[name] && len(out) < 1000 {
			seen[name] = true
			out = append(out, name)
		}
	}
	return out, err
}

// CompleteKeyArg completes a command's first argument with the names of the
// keys matching pattern (see scanNames), and nothing after it.
func (f *Factory) CompleteKeyArg(pattern string) cobra.CompletionFunc {
	return f.CompleteFirstArg(func(ctx context.Context, f *Factory, cmd *cobra.Command) ([]string, error) {
		return scanNames(ctx, f, pattern)
	})
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

// ScanLister lists the names scanNames finds for pattern.
func ScanLister(pattern string) func(ctx context.Context, f *Factory, cmd *cobra.Command) ([]string, error) {
	return func(ctx context.Context, f *Factory, cmd *cobra.Command) ([]string, error) {
		return scanNames(ctx, f, pattern)
	}
}
