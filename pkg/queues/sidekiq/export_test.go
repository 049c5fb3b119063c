package sidekiq

// Test hooks.
var (
	Requeued = requeued
	Stamp    = stamp
)

// SetAfterLocate sets the hook run between finding a job and moving it.
func SetAfterLocate(fn func(id string)) { afterLocate = fn }
