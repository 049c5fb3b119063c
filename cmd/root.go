package cmd

import (
	"slices"
	"strings"
	"time"

	"github.com/chatq-dev/chatq/cmd/bench"
	"github.com/chatq-dev/chatq/cmd/chat"
	"github.com/chatq-dev/chatq/cmd/demo"
	"github.com/chatq-dev/chatq/cmd/dev"
	"github.com/chatq-dev/chatq/cmd/list"
	"github.com/chatq-dev/chatq/cmd/metrics"
	"github.com/chatq-dev/chatq/cmd/queue"
	"github.com/chatq-dev/chatq/cmd/top"
	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/cli/conn"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

const rootLong = `chatq operates three messaging patterns stored in Redis:
group chat inboxes that work while recipients are offline (chat), a delayed
queue with visibility timeouts in RSMQ's layout (queue), and the sharded list
of "Redis in Action" (list).

Configuration: flag > CHATQ_* environment variable > config file
($XDG_CONFIG_HOME/chatq/config.yaml, or --config) > default. The password
comes from --askpass, the URL, CHATQ_PASSWORD, REDISCLI_AUTH or the
config file (in that order of precedence), and is never printed; no flag
takes a password. Sentinel's own password, when it has one, comes from
CHATQ_SENTINEL_PASSWORD or the config key sentinel-password.

Output: data on stdout, messages on stderr prefixed "chatq:". With -o json,
output is a stable contract: fields may be added, never renamed or removed.

Exit codes:
  0    success, including nothing to return (empty pop, empty poll)
  1    runtime error: connection, Redis error, not found, wrong key type
  2    usage error: unknown flag, missing argument, invalid name or value;
       or a destructive command not confirmed (queue delete/purge of a
       queue holding messages, off a terminal without --force, or declined)
  3    nothing to return, only with -e/--exit-status
  4    a write was sent but its reply was lost: the server may have
       applied it (the hint names the command that shows whether it did);
       exit 1 on a write means it was not applied; also a write that
       succeeded but whose output --jq or --template could not filter
  5    a health check found a threshold breached (queue check); 1 stays
       "could not find out"
  6    a drain (queue work --until-empty or --max-jobs) ran jobs that
       failed or timed out: they were not acked and come back
  130  interrupted: Ctrl-C or SIGTERM cut a command short; chat watch,
       queue work, metrics --listen and dev run until stopped, so for them
       it is the normal end: they stop cleanly and exit 0`

const rootExample = `  # try it without a Redis server
  chatq demo

  # run an embedded server in one terminal, use it from another
  chatq dev
  chatq ping

  # point at a real server; the password is asked, never a flag
  chatq --url redis://redis.internal:6379/0 --user app --askpass ping -o json

  # TLS with a private CA and a client certificate
  chatq --url rediss://redis.internal:6380 --cacert ca.pem --cert me.pem --key me.key ping

  # the master "main" behind three Sentinels
  chatq --url 'redis://s1:26379?addr=s2:26379&addr=s3:26379' --sentinel-master main ping`

// worksWithBrokenConfig says whether cmd runs even when the configuration
// has a bad file or value: those that need no server and help to find or
// work around the problem (version, config, completion, help).
func worksWithBrokenConfig(cmd *cobra.Command) bool {
	for c := cmd; c != nil; c = c.Parent() {
		switch c.Name() {
		case "version", "config", "completion", "help", cobra.ShellCompRequestCmd, cobra.ShellCompNoDescRequestCmd:
			return true
		}
	}
	return false
}

// newRootCmd returns chatq's whole command tree.
func newRootCmd(f *cmdutil.Factory) *cobra.Command {
	root := newRootOnly(f)
	for _, c := range subcommands() {
		root.AddCommand(c.new(f))
	}
	return root
}

// newRootOnly returns the root command with its global flags and no
// subcommands.
func newRootOnly(f *cmdutil.Factory) *cobra.Command {
	root := &cobra.Command{
		Use:           "chatq",
		Short:         "Operate group chats, delayed queues and sharded lists on Redis",
		Long:          rootLong,
		Example:       rootExample,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cmdutil.NoArgs,
		RunE:          func(cmd *cobra.Command, args []string) error { return cmd.Help() },
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := conn.LoadConfig(cmd.Root().PersistentFlags(), f.Getenv)
			if err != nil && (cfg == nil || !worksWithBrokenConfig(cmd)) {
				return err
			}
			if err := f.Load(cfg, cmd.Root().PersistentFlags()); err != nil {
				return err
			}
			if n := cmd.Name(); n != cobra.ShellCompRequestCmd && n != cobra.ShellCompNoDescRequestCmd {
				f.WarnConfig() // not into a shell's completion
			}
			return nil
		},
	}
	root.SetFlagErrorFunc(flagError)

	pf := root.PersistentFlags()
	pf.StringP("url", "u", conn.DefaultURL, "Redis URL: redis://, rediss:// (TLS) or unix://; with --cluster a seed (env CHATQ_URL)")
	pf.Bool("cluster", false, "treat --url as a Redis Cluster seed, ?addr=host:port repeating (env CHATQ_CLUSTER)")
	pf.String("prefix", "", "string put in front of every key chatq touches (env CHATQ_PREFIX)")
	pf.String("config", "", "config file (env CHATQ_CONFIG; default $XDG_CONFIG_HOME/chatq/config.yaml)")
	pf.StringP("output", "o", "text", "output format: text or json (env CHATQ_OUTPUT)")
	pf.String("jq", "", "filter JSON output with a jq expression; strings print raw (implies -o json)")
	pf.String("template", "", "format JSON output with a Go template, as gh's --template (implies -o json)")
	pf.BoolP("exit-status", "e", false, "exit 3 when there is nothing to return (env CHATQ_EXIT_STATUS)")
	pf.String("timeout", (3 * time.Second).String(), "connect and command timeout (env CHATQ_TIMEOUT)")
	pf.Bool("verbose", false, "log every Redis command on stderr, passwords hidden (env CHATQ_VERBOSE)")
	pf.String("user", "", "ACL user name, instead of the URL's (env CHATQ_USER)")
	pf.Bool("askpass", false, "read the password from the terminal, without echo (env CHATQ_ASKPASS)")
	pf.Int("db", 0, "database number, instead of the URL's /N (env CHATQ_DB)")
	pf.Bool("tls", false, "connect with TLS, even with a redis:// URL (env CHATQ_TLS)")
	pf.String("cacert", "", "PEM file of the CA that signs the server's certificate (env CHATQ_CACERT)")
	pf.String("cert", "", "client certificate PEM file, for servers that verify clients (env CHATQ_CERT)")
	pf.String("key", "", "private key PEM file of --cert (env CHATQ_KEY)")
	pf.Bool("insecure", false, "skip verifying the server's certificate; for tests only (env CHATQ_INSECURE)")
	pf.String("sni", "", "server name to send and verify, when it differs from --url's host (env CHATQ_SNI)")
	pf.String("sentinel-master", "", "treat --url as Sentinel addresses (?addr=host:port repeating) and connect to this master (env CHATQ_SENTINEL_MASTER)")
	for _, name := range []string{"cacert", "cert", "key"} {
		_ = root.MarkPersistentFlagFilename(name, "pem", "crt", "key")
	}

	_ = root.RegisterFlagCompletionFunc("jq", cobra.NoFileCompletions)
	_ = root.RegisterFlagCompletionFunc("template", cobra.NoFileCompletions)
	_ = root.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"text", "json"}, cobra.ShellCompDirectiveNoFileComp))

	return root
}

// subcommand is one of the root's commands, by its name, so that it can be
// built without the others.
type subcommand struct {
	name string
	new  func(f *cmdutil.Factory) *cobra.Command
}

// subcommands returns the root's commands in the order they are added.
func subcommands() []subcommand {
	return []subcommand{
		{"ping", func(f *cmdutil.Factory) *cobra.Command { return newCmdPing(f, nil) }},
		{"version", func(f *cmdutil.Factory) *cobra.Command { return newCmdVersion(f, nil) }},
		{"config", func(f *cmdutil.Factory) *cobra.Command { return newCmdConfig(f, nil) }},
		{"acl", func(f *cmdutil.Factory) *cobra.Command { return newCmdACL(f, nil) }},
		{"dev", func(f *cmdutil.Factory) *cobra.Command { return dev.NewCmdDev(f, nil) }},
		{"demo", func(f *cmdutil.Factory) *cobra.Command { return demo.NewCmdDemo(f, Run, nil) }},
		{"bench", func(f *cmdutil.Factory) *cobra.Command { return bench.NewCmdBench(f, nil) }},
		{"chat", chat.NewCmd},
		{"queue", queue.NewCmd},
		{"list", list.NewCmd},
		{"top", func(f *cmdutil.Factory) *cobra.Command { return top.NewCmdTop(f, nil) }},
		{"metrics", func(f *cmdutil.Factory) *cobra.Command { return metrics.NewCmd(f, nil) }},
	}
}

// newRootCmdFor returns the command tree that runs args: the root with only
// the command args name, built as in the full tree, when args name one of
// the root's commands (after any global flags). Building every command
// costs a one-shot command a good part of its own work; the root's help,
// help and completion commands, unknown commands (whose suggestions come
// from every name) and no command at all get the full tree, so what they
// print is unchanged.
func newRootCmdFor(f *cmdutil.Factory, args []string) *cobra.Command {
	root := newRootOnly(f)
	// Find the command as cobra will, global flags and their values
	// skipped, among stand-ins that cost nothing to build.
	subs := subcommands()
	stand := make([]*cobra.Command, len(subs))
	for i, c := range subs {
		stand[i] = &cobra.Command{Use: c.name, Run: func(*cobra.Command, []string) {}}
	}
	root.AddCommand(stand...)
	found, _, err := root.Find(args)
	i := slices.Index(stand, found)
	root.RemoveCommand(stand...)
	if err != nil || i < 0 {
		for _, c := range subs {
			root.AddCommand(c.new(f))
		}
		return root
	}
	root.AddCommand(subs[i].new(f))
	// The completion command cannot run here (it is not the command
	// found), and cobra would build its four subcommands.
	root.CompletionOptions.DisableDefaultCmd = true
	return root
}

// strictCompletion makes `chatq completion SHELL` refuse a shell it has no
// script for (cobra prints the group's help and exits 0, so that
// `chatq completion tcsh > file` would write help into the file), and
// gives the group an example.
func strictCompletion(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() != "completion" {
			continue
		}
		var shells []string
		for _, s := range c.Commands() {
			shells = append(shells, s.Name())
		}
		c.Example = `  chatq completion bash > /etc/bash_completion.d/chatq
  chatq completion zsh > "${fpath[1]}/_chatq"
  chatq completion fish > ~/.config/fish/completions/chatq.fish
  chatq completion powershell | Out-String | Invoke-Expression`
		c.Args = func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return cmdutil.WithHint(cmdutil.UsageErrorf("no completion script for %q", args[0]),
					"chatq has scripts for "+strings.Join(shells, ", "))
			}
			return nil
		}
		c.RunE = func(cmd *cobra.Command, args []string) error { return cmd.Help() }
	}
}

// flagError makes a flag's parse error a usage error (exit 2) with a hint
// for the likely mistakes: a misspelt flag (the nearest one is named), a
// password flag (chatq takes none, so that it never sits in a shell's
// history), a duration without its unit, a count that is not a number.
func flagError(cmd *cobra.Command, err error) error {
	msg := err.Error()
	switch {
	case strings.HasPrefix(msg, "unknown flag: --password"), strings.HasPrefix(msg, "unknown flag: --pass"):
		return cmdutil.WithHint(cmdutil.UsageErr(err),
			"chatq takes no password flag (it would stay in your shell's history): set CHATQ_PASSWORD or REDISCLI_AUTH, put it in the URL, or use --askpass")
	case strings.HasPrefix(msg, "unknown flag: --"):
		name := strings.TrimPrefix(msg, "unknown flag: --")
		if near := nearestFlag(cmd, name); near != "" {
			return cmdutil.WithHint(cmdutil.UsageErr(err), "did you mean --"+near+"?")
		}
	case strings.Contains(msg, "time: missing unit in duration"):
		return cmdutil.WithHint(cmdutil.UsageErr(err), "give a unit, e.g. 5s, 500ms, 10m or 2h")
	case strings.Contains(msg, "strconv.Parse"):
		// pflag's words for a number that is not one.
		if i := strings.Index(msg, ": strconv.Parse"); i > 0 {
			return cmdutil.UsageErrorf("%s: want a whole number", msg[:i])
		}
	}
	return cmdutil.UsageErr(err)
}

// nearestFlag returns the flag of cmd (its own and the global ones) whose
// name is closest to name, within two edits, or "".
func nearestFlag(cmd *cobra.Command, name string) string {
	best, bestD := "", 3
	visit := func(f *pflag.Flag) {
		if d := editDistance(name, f.Name); d < bestD {
			best, bestD = f.Name, d
		}
	}
	cmd.Flags().VisitAll(visit)
	cmd.InheritedFlags().VisitAll(visit)
	return best
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
