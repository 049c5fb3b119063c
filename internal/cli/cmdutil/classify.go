package cmdutil

import "github.com/spf13/cobra"

// Whether a command changes the server's data is declared in its
// constructor, by MarkWrite or MarkRead, so that a new command cannot be
// left out by accident: a test walks the command tree and fails for a leaf
// that is neither (see cmd's TestEveryLeafClassified).
const (
	writeAnnotation = "chatq.write"
	readAnnotation  = "chatq.read"
)

// MarkWrite marks cmd as a command that changes the server's data; check is
// the command line that shows whether it was applied. A lost reply to such a
// command exits 4 ("may have applied") instead of 1.
func MarkWrite(cmd *cobra.Command, check string) *cobra.Command {
	return annotate(cmd, writeAnnotation, check)
}

// MarkRead marks cmd as a command that changes no data on the server (or
// needs no server): a lost reply exits 1.
func MarkRead(cmd *cobra.Command) *cobra.Command {
	return annotate(cmd, readAnnotation, "")
}

// Classified reports whether cmd was marked by MarkWrite or MarkRead, and
// whether it writes.
func Classified(cmd *cobra.Command) (writes, ok bool) {
	if _, w := cmd.Annotations[writeAnnotation]; w {
		return true, true
	}
	_, r := cmd.Annotations[readAnnotation]
	return false, r
}

func annotate(cmd *cobra.Command, key, value string) *cobra.Command {
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[key] = value
	return cmd
}
