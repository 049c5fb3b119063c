package bench

import (
	"testing"
	"time"
)

func TestPercentileMs(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	for _, tt := range []struct {
		q    float64
		want float64
	}{{0.5, 50}, {0.99, 99}, {1, 100}, {0, 1}} {
		if got := percentileMs(d, tt.q); got != tt.want {
			t.Errorf("q=%v: got %v, want %v", tt.q, got, tt.want)
		}
	}
	if got := percentileMs(nil, 0.5); got != 0 {
		t.Errorf("empty: got %v", got)
	}
}
