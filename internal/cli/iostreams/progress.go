package iostreams

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// progress shows how far a long push has got: a bar on stderr when stderr is
// a terminal, and nothing at all when it is not (scripts, pipes, CI).
type Progress struct {
	w       io.Writer
	label   string
	total   int
	done    int
	last    time.Time
	enabled bool
}

// progressMin is the number of items below which no bar is worth drawing.
const progressMin = 10000

// NewProgress starts a progress display for total items.
func (s *IOStreams) NewProgress(label string, total int) *Progress {
	return &Progress{w: s.ErrOut, label: label, total: total, enabled: s.ErrTTY && total >= progressMin}
}

// Add counts n more items done, redrawing at most ten times a second.
func (p *Progress) Add(n int) {
	p.done += n
	if p.enabled && time.Since(p.last) >= 100*time.Millisecond {
		p.draw()
		p.last = time.Now()
	}
}

// Done draws the final state and ends the line.
func (p *Progress) Done() {
	if p.enabled {
		p.draw()
		fmt.Fprintln(p.w)
	}
}

func (p *Progress) draw() {
	frac := float64(p.done) / float64(max(p.total, 1))
	frac = min(frac, 1)
	const width = 30
	n := int(frac * width)
	fmt.Fprintf(p.w, "\rchatq: %s [%s%s] %3.0f%% %d/%d", p.label,
		strings.Repeat("#", n), strings.Repeat("-", width-n), frac*100, p.done, p.total)
}
