// Package queue holds the `chatq queue` commands: thin wrappers that parse
// flags, call pkg/delayq and print.
package queue

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/chatq-dev/chatq/internal/cmdutil"
	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/spf13/cobra"
)

const queueLong = `A delayed queue with visibility timeouts, stored in RSMQ's layout (the rsmq
npm package, 0.12.4), so chatq operates the queues Node services use.

A pushed message becomes due at once, after --delay, or --at a time; times
come from the Redis server's clock. poll receives due messages: each is
hidden for the visibility timeout (--vt) and comes back unless acked
(at-least-once); --pop deletes on receive (at-most-once). A dead-letter
policy (--max-receives N --dead-letter Q2) moves a message that was
received N times to Q2 instead of delivering it again; queue redrive Q2
moves such messages back.

Keys (with the global --prefix in front): <ns>:QUEUES, <ns>:<queue> and
<ns>:<queue>:Q, where <ns> is --namespace (env CHATQ_NAMESPACE, default
rsmq), RSMQ's "ns" option.`

func NewCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := cmdutil.NewGroupCmd("queue", "Delayed queue with visibility timeouts, stored in RSMQ's layout", queueLong)
	cmd.Example = `  chatq queue create jobs --vt 30s
  chatq queue push jobs --delay 10s 'resize image 42'
  chatq queue poll jobs --wait 30s -o json
  chatq queue work jobs --concurrency 4 -- ./handle.sh`
	cmd.PersistentFlags().String("namespace", "", "RSMQ namespace (rsmq's ns option) (env CHATQ_NAMESPACE, default rsmq)")
	cmd.AddCommand(
		newQueueCreateCmd(f),
		newQueueLsCmd(f),
		newQueueStatsCmd(f),
		newQueueSetCmd(f),
		newQueueDeleteCmd(f),
		newQueuePurgeCmd(f),
		newQueuePushCmd(f),
		newQueuePollCmd(f),
		newQueueAckCmd(f),
		newQueueRetryCmd(f),
		newQueuePeekCmd(f),
		newQueueWorkCmd(f),
		newQueueRedriveCmd(f),
		newQueueGetCmd(f),
	)
	// Backup and restore (export.go, import.go).
	cmd.AddCommand(newQueueExportCmd(f), newQueueImportCmd(f))
	// A lost reply to these exits 4 ("may have applied"), with the command
	// that shows whether it was.
	for name, check := range map[string]string{
		"create": "chatq queue ls",
		"set":    "chatq queue stats QUEUE",
		"delete": "chatq queue ls",
		"purge":  "chatq queue stats QUEUE",
		"push":   "chatq queue peek QUEUE",
		"poll":   "chatq queue stats QUEUE",
		"ack":    "chatq queue peek QUEUE",
		"retry":  "chatq queue peek QUEUE",
		// redrive: see partialRedrive for a reply lost after earlier calls
		"redrive": "chatq queue stats DLQ",
		"import":  "chatq queue stats QUEUE",
	} {
		cmdutil.MarkWriteSub(cmd, name, check)
	}
	listQueues := func(ctx context.Context, f *cmdutil.Factory, cmd *cobra.Command) ([]string, error) {
		q, err := queueClient(f, cmd)
		if err != nil {
			return nil, err
		}
		return listQueues(ctx, q)
	}
	queueNames := f.CompleteFirstArg(listQueues)
	for _, sub := range cmd.Commands() {
		if sub.Name() != "ls" {
			sub.ValidArgsFunction = queueNames
		}
	}
	f.CompleteFlagValues(cmd, listQueues, "dead-letter", "to")
	return cmd
}

// queueClient builds the delayq client for cmd's --namespace and the global
// --prefix; on a cluster the queue names are hash-tagged.
func queueClient(f *cmdutil.Factory, cmd *cobra.Command) (*delayq.Client, error) {
	ns := namespace(f, cmd)
	if err := validNamespace(ns); err != nil {
		return nil, err
	}
	c, err := f.Client()
	if err != nil {
		return nil, err
	}
	return delayq.New(c, delayq.Options{Namespace: ns, Prefix: f.Prefix(), HashTag: f.Config().Cluster}), nil
}

// namespace is cmd's --namespace, else CHATQ_NAMESPACE, else RSMQ's default.
func namespace(f *cmdutil.Factory, cmd *cobra.Command) string {
	ns, _ := cmd.Flags().GetString("namespace")
	if ns == "" {
		ns = f.Getenv("CHATQ_NAMESPACE")
	}
	if ns == "" {
		ns = "rsmq"
	}
	return ns
}

func validNamespace(ns string) error {
	if strings.ContainsAny(ns, "{} \t\r\n") {
		return cmdutil.UsageErrorf("invalid --namespace %q: no whitespace, '{' or '}'", ns)
	}
	return nil
}

// listQueues returns the namespace's queue names, sorted, walking the
// registry in pages of 100 (SSCAN may return a name twice).
func listQueues(ctx context.Context, q *delayq.Client) ([]string, error) {
	seen := map[string]bool{}
	var cursor uint64
	for {
		page, next, err := q.Queues(ctx, cursor, "", 100)
		if err != nil {
			return nil, err
		}
		for _, n := range page {
			seen[n] = true
		}
		if cursor = next; cursor == 0 {
			return slices.Sorted(maps.Keys(seen)), nil
		}
	}
}

// queueErr adds the hints for the queue package's errors. Invalid input
// (delayq.ErrInvalid, which is names.ErrInvalid) already exits 2.
func queueErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, delayq.ErrQueueNotFound):
		return cmdutil.WithHint(err, "create it with `chatq queue create NAME`, or list queues with `chatq queue ls` (check --namespace and --prefix)")
	case errors.Is(err, delayq.ErrQueueExists):
		return cmdutil.WithHint(err, "change it with `chatq queue set`, or delete it first with `chatq queue delete NAME` (`--force` if it holds messages)")
	case errors.Is(err, delayq.ErrMessageTooLong):
		return cmdutil.WithHint(err, "raise the queue's limit with `chatq queue set NAME --maxsize N` (1024 to 65536, or -1 for unlimited)")
	case errors.Is(err, delayq.ErrStaleReceipt):
		return cmdutil.WithHint(err, "its visibility timeout ended and another receive took it, which now handles it; give a longer --vt, or use `chatq queue work`, which renews it while a job runs")
	case errors.Is(err, delayq.ErrMessageNotFound):
		return cmdutil.WithHint(err, "it was acked, popped, dead-lettered or redriven already, or the id is wrong (see `chatq queue peek`)")
	}
	return err
}

// checkFlagDuration checks a duration flag the way the queue package would,
// naming the flag.
func checkFlagDuration(flag string, d time.Duration, wholeSeconds bool) error {
	unit := time.Millisecond
	if wholeSeconds {
		unit = time.Second
	}
	if err := delayq.CheckDuration("--"+flag, d, unit); err != nil {
		return cmdutil.UsageErr(err)
	}
	return nil
}

// parseAt parses --at: RFC 3339 (fractions allowed) or Unix seconds
// (decimals allowed).
func parseAt(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	whole, frac, _ := strings.Cut(s, ".")
	if len(frac) <= 9 && isDigits(whole) && (frac == "" || isDigits(frac)) && len(whole) <= 11 {
		sec, _ := strconv.ParseInt(whole, 10, 64)
		nsec, _ := strconv.ParseInt((frac + "000000000")[:9], 10, 64)
		return time.Unix(sec, nsec), nil
	}
	return time.Time{}, cmdutil.WithHint(cmdutil.UsageErrorf("invalid --at %q: want RFC 3339 or Unix seconds", s),
		"e.g. --at 2026-05-01T09:00:00Z, --at 2026-05-01T11:00:00+02:00 or --at 1777626000")
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// ms renders a time as Unix milliseconds for JSON, or nil for the zero time.
func ms(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixMilli()
}

// stamp renders a time for text output: RFC 3339 with milliseconds in UTC,
// or "-".
func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02T15:04:05.000Z07:00")
}

// roughly renders a wait for people: "1m30s" up to two days, then whole
// days ("115 days"), never "2764h0m0s".
func roughly(d time.Duration) string {
	switch {
	case d < time.Minute:
		return d.Round(time.Millisecond).String()
	case d < 48*time.Hour:
		return d.Round(time.Second).String()
	}
	return fmt.Sprintf("%.0f days", d.Hours()/24)
}

// infoTTY prints success chatter, only when stderr is a terminal and the
// output is text.
func infoTTY(f *cmdutil.Factory, format string, a ...any) {
	if f.IO.ErrTTY && !f.JSON() {
		f.IO.Infof(format, a...)
	}
}

// plural returns "1 message" or "2 messages".
func plural(n int64, word string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}
