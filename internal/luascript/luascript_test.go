package luascript

import (
	"testing"

	"github.com/redis/go-redis/v9"
)

func TestHashOnFirstUse(t *testing.T) {
	built := 0
	s := Build(func() string { built++; return "return " + "1" })
	if built != 0 {
		t.Fatal("source built before use")
	}
	if got, want := s.Hash(), redis.NewScript("return 1").Hash(); got != want {
		t.Errorf("hash %s, want %s", got, want)
	}
	s.Hash()
	if built != 1 {
		t.Errorf("source built %d times, want 1", built)
	}
	if got, want := New("return 2").Hash(), redis.NewScript("return 2").Hash(); got != want {
		t.Errorf("hash %s, want %s", got, want)
	}
}
