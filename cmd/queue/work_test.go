package queue

import "testing"

// The handler's CHATQ_URL never carries the password; the rest stays.
func TestWithoutPassword(t *testing.T) {
	for in, want := range map[string]string{
		"redis://127.0.0.1:6379/0":                       "redis://127.0.0.1:6379/0",
		"redis://:s3cret@127.0.0.1:6379/0":               "redis://127.0.0.1:6379/0",
		"rediss://alice:s3cret@redis.example.com:6380/2": "rediss://alice@redis.example.com:6380/2",
		"redis://bob@h:1?addr=h2:2&addr=h3:3":            "redis://bob@h:1?addr=h2:2&addr=h3:3",
		"redis://bob:pw@h:1?addr=h2:2&addr=h3:3":         "redis://bob@h:1?addr=h2:2&addr=h3:3",
		"unix://:pw@/var/run/redis.sock?db=1":            "unix:///var/run/redis.sock?db=1",
	} {
		if got := withoutPassword(in); got != want {
			t.Errorf("withoutPassword(%q) = %q, want %q", in, got, want)
		}
	}
}
