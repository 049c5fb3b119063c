package delayq

import "time"

// SetClock sets the client's clock, which names the minute of the records
// of its calls with a token (time.Now when nil), for tests.
func SetClock(c *Client, now func() time.Time) { c.now = now }
