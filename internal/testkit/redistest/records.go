package redistest

import "testing"

// RequireRecords checks the token records a test wrote under b's prefix:
// the HASHes whose names match pattern (after the prefix) are at most
// maxKeys and hold want fields together. It reads them with KEYS, which
// only a test's private keyspace affords.
func RequireRecords(t testing.TB, b Backend, pattern string, maxKeys int, want int64) {
	t.Helper()
	ctx := t.Context()
	keys, err := b.Client.Keys(ctx, b.Prefix+pattern).Result()
	if err != nil || len(keys) > maxKeys {
		t.Fatalf("%d record keys (%v), want at most %d: %v", len(keys), err, maxKeys, keys)
	}
	var records int64
	for _, k := range keys {
		n, err := b.Client.HLen(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		records += n
	}
	if records != want {
		t.Errorf("%d records in %d keys, want %d", records, len(keys), want)
	}
}
