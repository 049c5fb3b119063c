// Package cmdutil is what every chatq command shares and no command is: the
// Factory with its configuration and lazy Redis client, the output side and
// run helper of every command's options (Output, RunWith), typed errors with
// hints and exit codes, argument validators and shell completion helpers.
// The terminal and output live in internal/cli/iostreams, the connection (its
// configuration, client, hints and retries) in internal/cli/conn. It defines no
// cobra command.
package cmdutil

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/chatq-dev/chatq/internal/cli/conn"
	"github.com/chatq-dev/chatq/internal/cli/iostreams"
	"github.com/chatq-dev/chatq/internal/cli/jsonfilter"
	"github.com/redis/go-redis/v9"
	"github.com/spf13/pflag"
	"golang.org/x/term"
)

// Factory hands commands what they share: the streams, the configuration
// (loaded once the flags are parsed) and a Redis client built on first use,
// so a command that needs no server never dials one.
type Factory struct {
	IO      *iostreams.IOStreams
	Getenv  func(string) string
	cfg     *conn.Config
	flags   *pflag.FlagSet
	client  redis.UniversalClient
	closers []func()
	// minPoolSize, when set before the client is built, sizes its
	// connection pool for that many concurrent users (bench).
	minPoolSize int
	// ReadPassword, when set, replaces reading the --askpass password from
	// the terminal (tests).
	ReadPassword func() (string, error)
}

// Config returns the loaded configuration. It is set before any command runs.
func (f *Factory) Config() *conn.Config { return f.cfg }

// Load sets the configuration and the global flags it was read from, once
// they are parsed, and compiles --jq or --template: a bad expression is a
// usage error before any server call. Either flag implies -o json.
func (f *Factory) Load(cfg *conn.Config, flags *pflag.FlagSet) error {
	f.cfg = cfg
	f.flags = flags
	filter, err := outputFilter(flags)
	if err != nil || filter == nil {
		return err
	}
	if fl := flags.Lookup("output"); fl != nil && fl.Changed && fl.Value.String() != "json" {
		return WithHint(UsageErrorf("%s needs JSON output, and -o %s was given", filter.Flag(), fl.Value),
			"drop -o "+fl.Value.String()+": "+filter.Flag()+" implies -o json")
	}
	cfg.Output = "json"
	f.IO.SetFilter(filter)
	return nil
}

// outputFilter compiles --jq or --template when one is given, nil when
// neither is (then nothing of either is built).
func outputFilter(flags *pflag.FlagSet) (*jsonfilter.Filter, error) {
	if flags == nil {
		return nil, nil
	}
	jq, tmpl := flags.Lookup("jq"), flags.Lookup("template")
	switch {
	case jq == nil || tmpl == nil || !jq.Changed && !tmpl.Changed:
		return nil, nil
	case jq.Changed && tmpl.Changed:
		return nil, WithHint(UsageErrorf("--jq and --template exclude each other"),
			"a template can do what a jq expression does with range, if and the template functions; or filter with --jq alone")
	case jq.Changed:
		filter, err := jsonfilter.JQ(jq.Value.String(), os.Environ)
		if err != nil {
			return nil, WithHint(UsageErr(err), "quote the expression for the shell, e.g. --jq '.[] | .id'; jq's manual has the syntax")
		}
		return filter, nil
	}
	filter, err := jsonfilter.Template(tmpl.Value.String())
	if err != nil {
		return nil, WithHint(UsageErr(err), `e.g. --template '{{range .}}{{.id}}{{"\n"}}{{end}}'; Go's text/template has the syntax`)
	}
	return filter, nil
}

// WarnConfig says on stderr what is wrong with the configuration that does
// not stop the command (a password in a file other users can read).
func (f *Factory) WarnConfig() {
	for _, w := range f.cfg.Warnings {
		f.IO.Infof("warning: %s", w.Message)
	}
}

// Flags returns the global flags the configuration was read from.
func (f *Factory) Flags() *pflag.FlagSet { return f.flags }

// SetMinPoolSize sizes the client's connection pool, before it is built,
// for that many concurrent users (bench).
func (f *Factory) SetMinPoolSize(n int) { f.minPoolSize = n }

// JSON reports whether -o json was asked for.
func (f *Factory) JSON() bool { return f.cfg != nil && f.cfg.Output == "json" }

// Prefix is the string put in front of every key.
func (f *Factory) Prefix() string { return f.cfg.Prefix }

// Client returns the Redis client for the configured server, building it on
// first use. Main closes it.
func (f *Factory) Client() (redis.UniversalClient, error) {
	if f.client != nil {
		return f.client, nil
	}
	if f.cfg.NeedsPassword() {
		pw, err := f.askPassword()
		if err != nil {
			return nil, err
		}
		f.cfg.SetAskedPassword(pw)
	}
	c, err := conn.NewClient(f.cfg, f.IO, f.minPoolSize)
	if err != nil {
		return nil, err
	}
	f.client = c
	return c, nil
}

// askPassword reads the password for --askpass from the terminal without
// echo: /dev/tty, so stdin stays free for data, or else stdin when it is a
// terminal.
func (f *Factory) askPassword() (string, error) {
	if f.ReadPassword != nil {
		return f.ReadPassword()
	}
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err == nil {
		defer tty.Close()
	} else if in, ok := f.IO.In.(*os.File); ok && term.IsTerminal(int(in.Fd())) {
		tty = in
	} else {
		return "", WithHint(UsageErrorf("--askpass needs a terminal to read the password from"),
			"in scripts, give the password in CHATQ_PASSWORD or the config file's password key")
	}
	fmt.Fprint(f.IO.ErrOut, "chatq: password: ")
	b, err := term.ReadPassword(int(tty.Fd()))
	fmt.Fprintln(f.IO.ErrOut)
	if err != nil {
		return "", fmt.Errorf("--askpass: reading the password: %w", err)
	}
	return string(b), nil
}

// Persistent returns the retry loop for a long-running command on this
// factory's server (see Persistent), giving up after giveUpAfter (0: never).
// The client is looked up when a retry runs, as it may be built after.
func (f *Factory) Persistent(giveUpAfter time.Duration) *conn.Persistent {
	return &conn.Persistent{IO: f.IO, GiveUpAfter: giveUpAfter, Redirects: f.cfg != nil && f.cfg.Cluster,
		Refresh: func(ctx context.Context) { conn.Refresh(ctx, f.client) },
		Probe:   func(ctx context.Context) error { return conn.Probe(ctx, f.client) }}
}

// OnClose registers fn to run when the command ends.
func (f *Factory) OnClose(fn func()) { f.closers = append(f.closers, fn) }

// Close closes the client, if one was built, and runs the OnClose functions.
func (f *Factory) Close() {
	if f.client != nil {
		_ = f.client.Close()
	}
	for i := len(f.closers) - 1; i >= 0; i-- {
		f.closers[i]()
	}
}
