// Package demo holds `chatq demo`, the narrated tour on an embedded server.
package demo

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/chatq-dev/chatq/internal/base/keyspace"
	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/cli/embedded"
	"github.com/chatq-dev/chatq/internal/cli/iostreams"
	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"
)

type demoOptions struct {
	cmdutil.Output                                       // every step gets -o json when JSON is set
	Client         func() (redis.UniversalClient, error) // the --url server, to remove the demo's keys from
	Exec           RunFunc                               // runs one chatq command line in process

	URL      string // --url
	URLGiven bool   // --url was given: the tour runs there, under a prefix of its own
	Prefix   string
}

// RunFunc runs one chatq command line with the given streams and returns
// its exit code; the root command passes its Run.
type RunFunc func(ctx context.Context, args []string, io *iostreams.IOStreams, getenv func(string) string) int

// NewCmdDemo returns `chatq demo`, whose steps exec runs (runF: see
// cmdutil.RunWith).
func NewCmdDemo(f *cmdutil.Factory, exec RunFunc, runF func(context.Context, *demoOptions) error) *cobra.Command {
	opts := &demoOptions{}
	return cmdutil.MarkRead(&cobra.Command{
		Use:   "demo",
		Short: "Take a narrated tour of chat, queue and list on an embedded server",
		Long: `Take a narrated tour of chatq: each step says what it does on stderr and runs a
real chatq command, whose output appears on stdout.

The tour runs on an embedded in-memory server, so no Redis is needed. Given
--url explicitly it runs on that server instead, under a prefix of its own,
and deletes its keys at the end.`,
		Example: `  chatq demo
  chatq demo -o json
  chatq demo --url redis://127.0.0.1:6379/0`,
		Args: cmdutil.NoArgs,
		RunE: cmdutil.RunWith(f, opts, runF, demoRun, func(cmd *cobra.Command, args []string) (cmdutil.Run, error) {
			cfg := f.Config()
			opts.Client, opts.Exec = f.Client, exec
			opts.URL, opts.URLGiven, opts.Prefix = cfg.URL, cmd.Flags().Changed("url"), cfg.Prefix
			return nil, nil
		}),
	})
}

func demoRun(ctx context.Context, opts *demoOptions) error {
	d := &demo{ctx: ctx, opts: opts, url: opts.URL, prefix: opts.Prefix}
	if opts.URLGiven {
		d.prefix += keyspace.UniquePrefix("chatq-demo")
		c, err := opts.Client()
		if err != nil {
			return err
		}
		defer func() {
			if err := keyspace.DeletePrefix(context.WithoutCancel(ctx), c, d.prefix); err != nil {
				opts.IO.Infof("warning: could not remove the demo's keys %s*: %v", d.prefix, err)
			} else {
				d.say("removed the demo's keys (%s*)", d.prefix)
			}
		}()
	} else {
		s, err := embedded.Start("127.0.0.1:0")
		if err != nil {
			return err
		}
		defer s.Close()
		d.url = s.URL()
		d.say("started an embedded in-memory server on %s (give --url to use a real one)", s.Addr())
	}
	// The parts of the tour, in order; each pattern adds its own.
	for _, section := range []func(*demo) error{demoConnect, demoChat, demoQueue, demoList} {
		if err := section(d); err != nil {
			return err
		}
	}
	d.say("that was the tour; `chatq --help` lists every command")
	return nil
}

// demo is a narrated tour: it runs real chatq command lines in process,
// narrating on stderr and showing their output on stdout.
type demo struct {
	ctx  context.Context
	opts *demoOptions
	// The server the steps run on, and their prefix.
	url    string
	prefix string
}

// say narrates a step on stderr.
func (d *demo) say(format string, a ...any) {
	fmt.Fprintf(d.opts.IO.ErrOut, "\n# "+format+"\n", a...)
}

// run shows a chatq command line as a user would type it and runs it against
// the demo's server; a non-zero exit ends the tour.
func (d *demo) run(args ...string) error {
	return d.runIn(nil, nil, args...)
}

// runIn is run with stdin read from in, shown as `printf … | chatq …`,
// and stdout written to out instead, each when not nil.
func (d *demo) runIn(in *string, out io.Writer, args ...string) error {
	shown := make([]string, len(args))
	for i, a := range args {
		shown[i] = shellQuote(a)
	}
	pipe := ""
	streams := *d.opts.IO
	if in != nil {
		// stdin is not the terminal, so the command does not ask for typing.
		streams.In, streams.InTTY = strings.NewReader(*in), false
		pipe = "printf " + shellQuote(strings.ReplaceAll(*in, "\n", `\n`)) + " | "
	}
	if out != nil {
		streams.Out = out
	}
	fmt.Fprintf(d.opts.IO.ErrOut, "$ %schatq %s\n", pipe, strings.Join(shown, " "))
	output := "text"
	if d.opts.JSON {
		output = "json"
	}
	full := append([]string{"--url", d.url, "--prefix", d.prefix, "-o", output}, args...)
	if code := d.opts.Exec(d.ctx, full, &streams, func(string) string { return "" }); code != cmdutil.ExitOK {
		return fmt.Errorf("demo step `chatq %s` exited %d", strings.Join(shown, " "), code)
	}
	return nil
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=,@%+", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func demoConnect(d *demo) error {
	d.say("check the connection: server version, mode and round-trip time")
	return d.run("ping")
}
