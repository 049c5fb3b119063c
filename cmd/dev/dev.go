// Package dev holds `chatq dev`, the embedded development server.
package dev

import (
	"context"
	"fmt"

	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/cli/embedded"
	"github.com/spf13/cobra"
)

type devOptions struct {
	cmdutil.Output
	Addr string // where the server listens
}

// NewCmdDev returns `chatq dev` (runF: see cmdutil.RunWith).
func NewCmdDev(f *cmdutil.Factory, runF func(context.Context, *devOptions) error) *cobra.Command {
	opts := &devOptions{}
	cmd := &cobra.Command{
		Use:   "dev",
		Short: "Run an embedded in-memory Redis-protocol server for development",
		Long: `Run an embedded in-memory server that speaks the Redis protocol (miniredis) in
the foreground until interrupted. It keeps nothing: all data is lost when it
stops. It prints the URL to use on stdout ({"url":"redis://…"} with -o json).
It is for trying chatq out, not for production data; it lacks some Redis
commands (OBJECT, MEMORY, CONFIG).

Ctrl-C (SIGINT) or SIGTERM is how dev is meant to stop: it closes the server
and exits 0, so a script or supervisor that stops it sees a clean end.`,
		Example: `  chatq dev                          # in one terminal
  export CHATQ_URL=redis://127.0.0.1:6379/0
  chatq ping                         # in another

  chatq dev --addr 127.0.0.1:0       # any free port
  chatq dev --addr 127.0.0.1:0 -o json   # {"url":"redis://127.0.0.1:41234/0"}`,
		Args: cmdutil.NoArgs,
		RunE: cmdutil.RunWith(f, opts, runF, devRun, func(cmd *cobra.Command, args []string) (cmdutil.Run, error) {
			return nil, nil
		}),
	}
	cmd.Flags().StringVar(&opts.Addr, "addr", "127.0.0.1:6379", "address to listen on (port 0 picks a free one)")
	return cmdutil.MarkRead(cmd) // serves; sends no command
}

// devRun serves until ctx ends.
func devRun(ctx context.Context, opts *devOptions) error {
	s, err := embedded.Start(opts.Addr)
	if err != nil {
		return cmdutil.WithHint(fmt.Errorf("listen on %s: %w", opts.Addr, err),
			"is a Redis server already listening there? pick another with --addr")
	}
	defer s.Close()
	opts.IO.Infof("embedded server (miniredis) listening on %s; it keeps nothing: data is lost when it stops", s.Addr())
	opts.IO.Infof("use it with: export CHATQ_URL=%s   (Ctrl-C stops it)", s.URL())
	if opts.JSON {
		if err := opts.IO.WriteJSON(struct {
			URL string `json:"url"`
		}{s.URL()}); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(opts.IO.Out, s.URL())
	}
	<-ctx.Done()
	opts.IO.Infof("stopped")
	return nil
}
