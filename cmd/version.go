package cmd

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/spf13/cobra"
)

// version is set at build time: -ldflags "-X github.com/chatq-dev/chatq/cmd.version=v1.2.3".
var version = ""

// Version is chatq's version: the one injected by ldflags, else the module
// version from the build info (go install …@v1.2.3), else "dev".
func Version() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

type versionOptions struct {
	cmdutil.Output
}

// newCmdVersion returns `chatq version` (runF: see cmdutil.RunWith).
func newCmdVersion(f *cmdutil.Factory, runF func(context.Context, *versionOptions) error) *cobra.Command {
	opts := &versionOptions{}
	return cmdutil.MarkRead(&cobra.Command{
		Use:     "version",
		Short:   "Print chatq's version",
		Example: "  chatq version\n  chatq version -o json",
		Args:    cmdutil.NoArgs,
		RunE: cmdutil.RunWith(f, opts, runF, func(_ context.Context, o *versionOptions) error { return versionRun(o) }, func(cmd *cobra.Command, args []string) (cmdutil.Run, error) {
			return nil, nil
		}),
	})
}

type versionResult struct {
	Version string `json:"version"`
	Go      string `json:"go"`
	OS      string `json:"os"`
	Arch    string `json:"arch"`
}

func versionRun(opts *versionOptions) error {
	v := versionResult{Version(), runtime.Version(), runtime.GOOS, runtime.GOARCH}
	if opts.JSON {
		return opts.IO.WriteJSON(v)
	}
	fmt.Fprintf(opts.IO.Out, "chatq %s (%s, %s/%s)\n", v.Version, v.Go, v.OS, v.Arch)
	return nil
}
