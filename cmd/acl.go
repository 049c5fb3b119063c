package cmd

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/chatq-dev/chatq/internal/base/keyspace"
	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/cli/conn"
	"github.com/chatq-dev/chatq/internal/cli/queuekinds"
	"github.com/chatq-dev/chatq/pkg/chat"
	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/chatq-dev/chatq/pkg/queues"
	"github.com/chatq-dev/chatq/pkg/shardlist"
	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"
)

type aclOptions struct {
	cmdutil.Output

	User       string // --user, the global flag
	ReadOnly   bool
	Namespaces []string // --namespace, else CHATQ_NAMESPACE, else rsmq
	Prefix     string
	Cluster    bool
	DB         int // the database chatq selects (aclDB)
	// Kind, when set, is another queue kind's (bullmq, asynq, stream):
	// the line grants what chatq's queue commands need on its queues.
	Kind string
}

// newCmdACL returns `chatq acl` (runF: see cmdutil.RunWith).
func newCmdACL(f *cmdutil.Factory, runF func(context.Context, *aclOptions) error) *cobra.Command {
	opts := &aclOptions{}
	cmd := &cobra.Command{
		Use:   "acl --user NAME [--read-only]",
		Short: "Print the ACL SETUSER line of a least-privilege user for chatq",
		Long: `Print one line, an ACL SETUSER command that gives the user exactly the
commands, key patterns and Pub/Sub channels chatq needs under the current
--prefix and queue --namespace, and nothing else. Pipe it to redis-cli as an
administrator, then give the user a password on the server:

  chatq --prefix app: acl --user app | redis-cli
  redis-cli ACL SETUSER app '>a-long-random-password'

The line holds no password and keeps the user's passwords: it resets the
user's commands, keys and channels, then grants. Run it again after changing
--prefix or --namespace. --read-only grants what ping, chat members, ls,
history, pending --peek and watch, queue ls (-l), stats, peek, get, export and
check, list llen, lrange and shards, metrics and top's view need: read
commands, and the scripts that read (a script runs with its caller's
permissions, so it can write nothing). top's actions (retry, delete,
redrive) need a user that may write.

-o json prints the line and, per chatq command, what it needs
(docs/security.md lists the same). chatq bench and chatq demo are not
covered: they write under prefixes of their own, and need no production
user. Shell completion of list keys and chat ids, and the discovery of
sharded lists and chats by metrics and top, need SCAN, which the line leaves out
(SCAN lists every key name on the server, whatever the key patterns):
without it metrics and top read the queues only, and say so.

--kind bullmq, asynq or stream prints instead the line for chatq's queue
commands on that library's queues, from what the kind says it touches
(docs/kinds.md); the kinds that find their queues by SCAN (BullMQ's, the
streams) include it.`,
		Example: `  chatq --prefix app: acl --user app | redis-cli
  chatq --prefix app: acl --user dashboard --read-only
  chatq --prefix app: --cluster acl --user app -o json
  chatq acl --user ops --kind bullmq | redis-cli   # chatq's queue commands on BullMQ's queues`,
		Args: cmdutil.NoArgs,
		RunE: cmdutil.RunWith(f, opts, runF, func(_ context.Context, o *aclOptions) error { return aclRun(o) }, func(cmd *cobra.Command, args []string) (cmdutil.Run, error) {
			cfg := f.Config()
			opts.User, opts.Prefix, opts.Cluster, opts.DB = cfg.User, cfg.Prefix, cfg.Cluster, aclDB(cfg)
			if len(opts.Namespaces) == 0 && f.Getenv("CHATQ_NAMESPACE") != "" {
				opts.Namespaces = strings.Split(f.Getenv("CHATQ_NAMESPACE"), ",")
			}
			if len(opts.Namespaces) == 0 {
				opts.Namespaces = []string{"rsmq"}
			}
			return nil, opts.validate()
		}),
	}
	cmd.Flags().BoolVar(&opts.ReadOnly, "read-only", false, "grant only what the commands that read need")
	cmd.Flags().StringVar(&opts.Kind, "kind", "", "instead, the line for the queues of another kind: "+strings.Join(queuekinds.Names[1:], ", "))
	cmd.Flags().StringSliceVar(&opts.Namespaces, "namespace", nil, "RSMQ namespaces of the queues, comma-separated (env CHATQ_NAMESPACE, default rsmq)")
	return cmdutil.MarkRead(cmd) // prints a line; needs no server
}

type aclResult struct {
	User     string `json:"user"`
	ReadOnly bool   `json:"read_only"`
	Line     string `json:"line"`
	Needs    []need `json:"needs"`
}

func (o *aclOptions) validate() error {
	if o.User == "" {
		return cmdutil.WithHint(cmdutil.UsageErrorf("acl needs --user NAME"), "name the user to create: chatq acl --user app")
	}
	for _, ns := range o.Namespaces {
		if ns == "" || strings.ContainsAny(ns, "{} \t\r\n") {
			return cmdutil.UsageErrorf("invalid --namespace %q: not empty, no whitespace, '{' or '}'", ns)
		}
	}
	return nil
}

func aclRun(opts *aclOptions) error {
	// The line grants the patterns under --prefix; the JSON shows them
	// without it, as docs/security.md does.
	all, shown := needs(opts.Prefix), needs("")
	if opts.Kind != "" {
		var err error
		if all, err = kindNeeds(opts.Kind, opts.Prefix); err != nil {
			return err
		}
		shown, _ = kindNeeds(opts.Kind, "")
	}
	args := aclArgs(opts.User, selectNeeds(all, opts.ReadOnly), opts.Prefix, opts.Namespaces, opts.Cluster, opts.DB != 0)
	res := aclResult{User: opts.User, ReadOnly: opts.ReadOnly, Line: strings.Join(quoteAll(args), " "), Needs: selectNeeds(shown, opts.ReadOnly)}
	if opts.JSON {
		return opts.IO.WriteJSON(res)
	}
	_, err := fmt.Fprintln(opts.IO.Out, res.Line)
	return err
}

// need is what one chatq command asks of the server: the Redis commands it
// sends (scripts' own calls included, as ACLs check those too; the script
// commands themselves, HELLO and PING apart), the key patterns and the
// Pub/Sub channels, with --prefix applied. "{ns}" stands for the queue
// --namespace, behind --prefix.
type need struct {
	Command  string   `json:"command"`
	Write    bool     `json:"write"`
	Redis    []string `json:"redis"`
	Keys     []string `json:"keys"`
	Channels []string `json:"channels,omitempty"`
}

// Every command's connection set-up: HELLO (with AUTH in it), and PING,
// which go-redis also sends to check a Pub/Sub connection.
var connNeeds = []string{"hello", "ping"}

// Scripts run by EVALSHA, by EVAL when the server has not cached them yet,
// and loaded ahead by SCRIPT LOAD where a pipeline needs them cached.
var scriptNeeds = []string{"evalsha", "eval", "script|load"}

// chatCommands, queueCommands and listCommands name, per chatq command, the
// methods of pkg/chat, pkg/delayq and pkg/shardlist it calls: what they
// need comes from the packages' Access tables.
var (
	chatCommands = []commandOps{
		{"chat create", []string{"Create"}},
		{"chat send", []string{"Send"}},
		{"chat join", []string{"Join"}},
		{"chat leave", []string{"Leave"}},
		{"chat pending", []string{"Pending (peek)", "MarkSeen"}}, // marks after printing
		{"chat pending --peek", []string{"Pending (peek)"}},
		{"chat watch", []string{"Watch"}},
		{"chat watch --mark", []string{"Watch (mark)"}},
		{"chat ls", []string{"UserChats"}},
		{"chat members", []string{"Members"}},
		{"chat history", []string{"History"}},
	}
	queueCommands = []commandOps{
		{"queue create", []string{"Create"}},
		{"queue ls", []string{"Queues"}},
		{"queue ls -l", []string{"Queues", "StatsEach"}},
		{"queue stats", []string{"Stats"}},
		{"queue stats (index rebuild)", []string{"Reindex"}},
		{"queue set", []string{"SetAttributes"}},
		{"queue push", []string{"Push", "Stats"}}, // Stats: --lines and --jsonl check maxsize first
		{"queue peek", []string{"Peek"}},
		{"queue get", []string{"Get"}},
		{"queue poll", []string{"Receive", "Receive (wait)"}},
		{"queue ack", []string{"Ack"}},
		{"queue retry", []string{"Retry"}},
		{"queue retry --inflight-for, --min-receives", []string{"Export", "Retry"}},
		{"queue redrive", []string{"Redrive"}},
		{"queue work", []string{"Work"}},
		{"queue purge", []string{"Purge"}},
		{"queue delete", []string{"DeadLetterSources", "Stats", "Delete"}},
		{"queue export", []string{"Stats", "Export"}},
		{"queue import", []string{"Stats", "Create", "Import"}},
		{"top (queues)", []string{"Queues", "Stats", "Peek"}},
		// the actions of top's queue view
		{"top: retry, delete, redrive", []string{"Get", "Retry", "Ack", "Redrive"}},
		{"queue check", []string{"StatsEach"}},
	}
	// Info checks an explicit --shard-size against the list's.
	listCommands = []commandOps{
		{"list lpush, rpush", []string{"LPush", "RPush"}},
		{"list lpop, rpop", []string{"LPop", "RPop", "Info"}},
		{"list blpop, brpop", []string{"BLPop", "BRPop", "Info"}},
		{"list llen", []string{"LLen", "Info"}},
		{"list lrange", []string{"LRange", "Info"}},
		{"list shards", []string{"Layout", "Info"}},
		// list ls finds the lists with SCAN, which the line leaves out
		// (as for completion and metrics: docs/security.md).
		{"list ls", []string{"Info"}},
		{"list del", []string{"Delete"}},
	}
)

// commandOps is a chatq command and the package methods it calls.
type commandOps struct {
	command string
	ops     []string
}

// needs lists, per chatq command, what it needs under prefix (the chat and
// list commands' from their packages). Checked against the Lua scripts by
// tests, and run as an ACL user in CI (CHATQ_TEST_ACL=1).
func needs(prefix string) []need {
	// Access makes no Redis call: the clients need no server.
	// top's view of chats, lists and the server reads what metrics does
	// (its row); its queue view also peeks.
	out := []need{{"ping", false, nil, nil, nil}}
	out = append(out, fromAccess(chatCommands, table(chat.New(nil, chat.Options{Prefix: prefix}).Access()))...)
	// The queue patterns keep "{ns}" for the namespaces (aclArgs puts
	// each in, behind the prefix).
	queues := table(delayq.New(nil, delayq.Options{Namespace: "{ns}"}).Access())
	lists := table(shardlist.New(nil, shardlist.Options{Prefix: prefix}).Access())
	chats := table(chat.New(nil, chat.Options{Prefix: prefix}).Access())
	out = append(out, fromAccess(queueCommands, queues)...)
	out = append(out, fromAccess(listCommands, lists)...)
	return append(out, metricsNeed(queues, lists, chats))
}

// metricsNeed is what chatq metrics (and chatq top) needs: the listings
// and numbers of the three packages, and INFO; but not SCAN, which finds
// the lists and chats: it lists every key name on the server whatever the
// key patterns, so the line leaves it out (metrics then reads queues only,
// and says so).
func metricsNeed(queues, lists, chats map[string]access) need {
	n := need{Command: "metrics", Redis: []string{"info"}}
	for _, part := range [][]need{
		fromAccess([]commandOps{{"metrics", []string{"Queues", "StatsEach"}}}, queues),
		fromAccess([]commandOps{{"metrics", []string{"Lists", "Info"}}}, lists),
		fromAccess([]commandOps{{"metrics", []string{"Chats", "Stats"}}}, chats),
	} {
		n.Write = n.Write || part[0].Write
		for _, c := range part[0].Redis {
			if c != "scan" {
				n.Redis = appendNew(n.Redis, c)
			}
		}
		for _, k := range part[0].Keys {
			n.Keys = appendNew(n.Keys, k)
		}
	}
	slices.Sort(n.Redis)
	return n
}

// access is one method's row of a package's Access table.
type access struct {
	write                    bool
	commands, keys, channels []string
}

// table indexes one package's Access rows by method. The three packages'
// Access types have the same fields (api_contract_test.go checks it).
func table[T ~struct {
	Op       string
	Write    bool
	Commands []string
	Keys     []string
	Channels []string
}](rows []T) map[string]access {
	out := map[string]access{}
	for _, r := range rows {
		a := chat.Access(r)
		out[a.Op] = access{a.Write, a.Commands, a.Keys, a.Channels}
	}
	return out
}

// fromAccess builds the needs of commands from their methods' rows: the
// union of each, script commands apart (every command but ping gets them).
func fromAccess(commands []commandOps, table map[string]access) []need {
	var out []need
	for _, c := range commands {
		n := need{Command: c.command}
		for _, op := range c.ops {
			a, ok := table[op]
			if !ok {
				panic("chatq acl: no method " + op + " in the package's Access table") // a test runs this
			}
			n.Write = n.Write || a.write
			for _, cmd := range a.commands {
				if !slices.Contains(scriptNeeds, cmd) {
					n.Redis = appendNew(n.Redis, cmd)
				}
			}
			for _, k := range a.keys {
				n.Keys = appendNew(n.Keys, k)
			}
			for _, ch := range a.channels {
				n.Channels = appendNew(n.Channels, ch)
			}
		}
		slices.Sort(n.Redis)
		out = append(out, n)
	}
	return out
}

// appendNew appends s to list unless it is there.
func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// selectNeeds returns every command's needs, or only the readers'.
func selectNeeds(needs []need, readOnly bool) []need {
	var out []need
	for _, n := range needs {
		if !readOnly || !n.Write {
			out = append(out, n)
		}
	}
	return out
}

// aclArgs builds the arguments of ACL SETUSER for sel: reset the user's
// commands, keys and channels (not its passwords), switch it on, grant.
func aclArgs(user string, sel []need, prefix string, nss []string, cluster, selectDB bool) []string {
	cmds := map[string]bool{}
	keys := map[string]bool{}
	chans := map[string]bool{}
	for _, c := range connNeeds {
		cmds[c] = true
	}
	for _, n := range sel {
		for _, c := range n.Redis {
			cmds[c] = true
		}
		if n.Command != "ping" {
			for _, c := range scriptNeeds {
				cmds[c] = true
			}
		}
		for _, ns := range nss {
			for _, k := range n.Keys {
				keys[expandPattern(prefix, ns, k)] = true
			}
			for _, ch := range n.Channels {
				chans[expandPattern(prefix, ns, ch)] = true
			}
		}
	}
	if cluster {
		// go-redis reads the slot map and the command table, and follows
		// ASK redirections during a resharding.
		for _, c := range []string{"cluster|slots", "command", "asking"} {
			cmds[c] = true
		}
	}
	if selectDB {
		cmds["select"] = true
	}
	args := []string{"ACL", "SETUSER", user, "on", "resetkeys", "resetchannels", "-@all"}
	for _, c := range sorted(cmds) {
		args = append(args, "+"+c)
	}
	for _, k := range sorted(keys) {
		args = append(args, "~"+k)
	}
	for _, ch := range sorted(chans) {
		args = append(args, "&"+ch)
	}
	return args
}

// expandPattern puts the prefix and namespace, escaped for glob matching,
// in place of a pattern's "{ns}"; the other patterns have the prefix.
func expandPattern(prefix, ns, p string) string {
	if rest, ok := strings.CutPrefix(p, "{ns}"); ok {
		return keyspace.Quote(prefix+ns) + rest
	}
	return p
}

// aclDB is the database chatq selects: --db, else the URL's.
func aclDB(cfg *conn.Config) int {
	if cfg.DBSet {
		return cfg.DB
	}
	if cfg.Cluster || cfg.SentinelMaster != "" {
		return 0
	}
	if opt, err := redis.ParseURL(cfg.URL); err == nil {
		return opt.DB
	}
	return 0
}

func sorted(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// quoteAll quotes, for redis-cli, the arguments that need it.
func quoteAll(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if a != "" && !strings.ContainsAny(a, " \t\r\n\"'\\") {
			out[i] = a
			continue
		}
		out[i] = `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", `\r`, "\t", `\t`).Replace(a) + `"`
	}
	return out
}

// kindNeeds lists what chatq's queue commands need on the queues of
// another kind, from the kind's own Access table (pkg/queues).
func kindNeeds(kind, prefix string) ([]need, error) {
	reg := queuekinds.New(delayq.New(nil, delayq.Options{}), queues.Env{Prefix: prefix})
	k, err := reg.Kind(kind)
	if err != nil || kind == "rsmq" {
		return nil, cmdutil.WithHint(cmdutil.UsageErrorf("invalid --kind %q", kind),
			"give one of "+strings.Join(queuekinds.Names[1:], ", ")+"; without --kind the line covers RSMQ's queues, sharded lists and chats")
	}
	al, ok := k.(queues.AccessLister)
	if !ok {
		return nil, fmt.Errorf("chatq acl: the %s kind does not say what it needs", kind)
	}
	out := []need{{"ping", false, nil, nil, nil}}
	for _, a := range al.Access() {
		n := need{Command: "queue " + a.Op + " (" + kind + ")", Write: a.Write, Keys: a.Keys}
		for _, c := range a.Commands {
			if !slices.Contains(scriptNeeds, c) {
				n.Redis = appendNew(n.Redis, c)
			}
		}
		slices.Sort(n.Redis)
		out = append(out, n)
	}
	return out, nil
}
