// Package demo holds `chatq demo`, the narrated tour on an embedded server.
package demo

import (
	"context"
	"fmt"
	"strings"

	"github.com/chatq-dev/chatq/internal/cmdutil"
	"github.com/chatq-dev/chatq/internal/embedded"
	"github.com/chatq-dev/chatq/internal/iostreams"
	"github.com/chatq-dev/chatq/internal/keyspace"
	"github.com/spf13/cobra"
)

// demo is a narrated tour: it runs real chatq command lines in process,
// narrating on stderr and showing their output on stdout.
type demo struct {
	ctx    context.Context
	f      *cmdutil.Factory
	url    string
	prefix string
	// exec runs one chatq command line in process (cmd.Run).
	exec RunFunc
}

// RunFunc runs one chatq command line with the given streams and returns
// its exit code; the root command passes its Run.
type RunFunc func(ctx context.Context, args []string, io *iostreams.IOStreams, getenv func(string) string) int

func NewCmd(f *cmdutil.Factory, exec RunFunc) *cobra.Command {
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
		RunE: func(cmd *cobra.Command, args []string) error {
			d := &demo{ctx: cmd.Context(), f: f, exec: exec, url: f.Config().URL, prefix: f.Prefix()}
			if cmd.Flags().Changed("url") {
				d.prefix += keyspace.UniquePrefix("chatq-demo")
				c, err := f.Client()
				if err != nil {
					return err
				}
				defer func() {
					if err := keyspace.DeletePrefix(context.WithoutCancel(d.ctx), c, d.prefix); err != nil {
						f.IO.Infof("warning: could not remove the demo's keys %s*: %v", d.prefix, err)
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
		},
	})
}

// say narrates a step on stderr.
func (d *demo) say(format string, a ...any) {
	fmt.Fprintf(d.f.IO.ErrOut, "\n# "+format+"\n", a...)
}

// run shows a chatq command line as a user would type it and runs it against
// the demo's server; a non-zero exit ends the tour.
func (d *demo) run(args ...string) error {
	return d.runIn(nil, args...)
}

// runIn is run with stdin read from in.
func (d *demo) runIn(in *strings.Reader, args ...string) error {
	shown := make([]string, len(args))
	for i, a := range args {
		shown[i] = shellQuote(a)
	}
	fmt.Fprintf(d.f.IO.ErrOut, "$ chatq %s\n", strings.Join(shown, " "))
	io := *d.f.IO
	if in != nil {
		io.In = in
	}
	full := append([]string{"--url", d.url, "--prefix", d.prefix, "-o", d.f.Config().Output}, args...)
	if code := d.exec(d.ctx, full, &io, func(string) string { return "" }); code != cmdutil.ExitOK {
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
