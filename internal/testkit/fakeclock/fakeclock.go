// Package fakeclock is a client's clock that a test sets: the packages
// name their token records by the minute of the client's clock (their
// test-only SetClock), and the tests move that minute by hand.
package fakeclock

import (
	"strconv"
	"sync"
	"time"
)

// Minute0 is the start of minute m in the tests: 30,000,000 minutes after
// 1970 (8 digits, as today's).
var Minute0 = time.UnixMilli(30_000_000 * 60_000)

// Clock is a clock that stands still until Set; safe for concurrent use.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// New returns a clock at Minute0.
func New() *Clock { return &Clock{t: Minute0} }

// Now is the clock's time (the func a package's SetClock takes).
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// Minute is the clock's minute as record keys end: Unix ms / 60000.
func (c *Clock) Minute() string { return strconv.FormatInt(c.Now().UnixMilli()/60000, 10) }
