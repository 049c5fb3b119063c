package iostreams

import (
	"bufio"
	"io"
	"strings"
)

// ReadLines reads all of r (before any write, so that a read error leaves
// the list untouched) as one item per line, without the line ending.
func ReadLines(r io.Reader) ([]string, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 512*1024*1024)
	var items []string
	for sc.Scan() {
		// ScanLines drops the line's ending: its "\n" and one "\r" before
		// it (TrimLineEnding's rule); any other "\r" is data.
		items = append(items, sc.Text())
	}
	return items, sc.Err()
}

// TrimLineEnding drops the line ending at the end of s: one "\n" and then
// one "\r" (a CRLF ending, or a lone CR at the very end), as bufio's
// ScanLines drops each line's. It is chatq's one rule for stdin: a body
// read whole (`queue push Q -`, `chat send C -`) keeps every byte but its
// final line ending, and each line of the line modes (`--lines`,
// `--jsonl`, `list rpush K -`) keeps every byte but its own.
func TrimLineEnding(s string) string {
	return strings.TrimSuffix(strings.TrimSuffix(s, "\n"), "\r")
}
