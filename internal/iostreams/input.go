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
		items = append(items, strings.TrimSuffix(sc.Text(), "\r"))
	}
	return items, sc.Err()
}
