package cmd

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// progress shows how far a long push from stdin has got: a bar on a
// terminal's stderr when the input's size is known (a redirected file), a
// running count otherwise, and nothing at all when stderr is not a terminal.
type progress struct {
	w       io.Writer
	label   string
	total   int64 // bytes, 0 when unknown
	bytes   int64
	items   int64
	last    time.Time
	enabled bool
}

// newProgress starts a progress display for reading f.IO.In.
func (f *Factory) newProgress(label string) *progress {
	p := &progress{w: f.IO.ErrOut, label: label, enabled: f.IO.ErrTTY}
	if file, ok := f.IO.In.(*os.File); ok {
		if fi, err := file.Stat(); err == nil && fi.Mode().IsRegular() {
			p.total = fi.Size()
		}
	}
	return p
}

// Add counts items and the input bytes they took, redrawing at most ten
// times a second.
func (p *progress) Add(items int, bytes int64) {
	p.items += int64(items)
	p.bytes += bytes
	if p.enabled && time.Since(p.last) >= 100*time.Millisecond {
		p.draw()
		p.last = time.Now()
	}
}

// Done draws the final state and ends the line.
func (p *progress) Done() {
	if p.enabled && p.items > 0 {
		p.draw()
		fmt.Fprintln(p.w)
	}
}

func (p *progress) draw() {
	if p.total <= 0 {
		fmt.Fprintf(p.w, "\rchatq: %s %d items", p.label, p.items)
		return
	}
	frac := float64(p.bytes) / float64(p.total)
	if frac > 1 {
		frac = 1
	}
	const width = 30
	n := int(frac * width)
	fmt.Fprintf(p.w, "\rchatq: %s [%s%s] %3.0f%% %d items", p.label,
		strings.Repeat("#", n), strings.Repeat("-", width-n), frac*100, p.items)
}
