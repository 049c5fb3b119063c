package cmd

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/chatq-dev/chatq/internal/cmdutil"
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

func newVersionCmd(f *cmdutil.Factory) *cobra.Command {
	return cmdutil.MarkRead(&cobra.Command{
		Use:     "version",
		Short:   "Print chatq's version",
		Example: "  chatq version\n  chatq version -o json",
		Args:    cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			v := struct {
				Version string `json:"version"`
				Go      string `json:"go"`
				OS      string `json:"os"`
				Arch    string `json:"arch"`
			}{Version(), runtime.Version(), runtime.GOOS, runtime.GOARCH}
			if f.JSON() {
				return f.IO.WriteJSON(v)
			}
			fmt.Fprintf(f.IO.Out, "chatq %s (%s, %s/%s)\n", v.Version, v.Go, v.OS, v.Arch)
			return nil
		},
	})
}
