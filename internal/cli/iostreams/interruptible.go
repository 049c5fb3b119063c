package iostreams

import (
	"context"
	"io"
	"sync"
)

// Interruptible returns r whose Read ends with ctx's error as soon as ctx
// ends, even while a read of r is blocked (a terminal or a pipe with no
// input yet): Ctrl-C and SIGTERM then stop a command that reads stdin at
// once, instead of when the input closes. The blocked read goes on in the
// background; what it returns after ctx ended is dropped, and r is never
// read twice at once. Reads before ctx ends pass r's data and errors
// through unchanged.
func Interruptible(ctx context.Context, r io.Reader) io.Reader {
	return &ctxReader{ctx: ctx, r: r}
}

type ctxReader struct {
	ctx     context.Context
	r       io.Reader
	mu      sync.Mutex
	pending chan readResult // a read under way, or nil
	buf     []byte
}

type readResult struct {
	n   int
	err error
}

func (c *ctxReader) Read(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	if len(p) == 0 {
		return 0, nil
	}
	if c.pending == nil {
		// Read into a buffer of our own: p may be reused by the caller
		// after an interrupted Read returns, while r still writes.
		if cap(c.buf) < len(p) {
			c.buf = make([]byte, len(p))
		}
		buf := c.buf[:len(p)]
		ch := make(chan readResult, 1)
		c.pending = ch
		go func() {
			n, err := c.r.Read(buf)
			ch <- readResult{n, err}
		}()
	}
	select {
	case res := <-c.pending:
		c.pending = nil
		n := copy(p, c.buf[:res.n])
		if n < res.n {
			// p shrank since the read began (a caller that retries with a
			// smaller slice): keep the rest for the next Read.
			c.buf = append(c.buf[:0], c.buf[n:res.n]...)
			rest := len(c.buf)
			ch := make(chan readResult, 1)
			ch <- readResult{rest, res.err}
			c.pending = ch
			return n, nil
		}
		return n, res.err
	case <-c.ctx.Done():
		return 0, c.ctx.Err()
	}
}
