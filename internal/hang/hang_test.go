package hang

import (
	"errors"
	"testing"
	"time"
)

// A wait that outlasts its limit returns timedOut's error; one that
// returns in time, or with no limit, passes its own result through.
func TestWait(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	late, own := errors.New("late"), errors.New("own")
	if err := Wait(20*time.Millisecond, func() error { <-block; return nil }, func() error { return late }); err != late {
		t.Errorf("blocked wait: got %v, want the timeout's error", err)
	}
	if err := Wait(time.Minute, func() error { return own }, func() error { return late }); err != own {
		t.Errorf("quick wait: got %v, want its own error", err)
	}
	if err := Wait(0, func() error { return own }, func() error { return late }); err != own {
		t.Errorf("no limit: got %v, want its own error", err)
	}
}

func TestLimit(t *testing.T) {
	for _, c := range []struct {
		v    string
		want time.Duration
	}{{"", time.Hour}, {"30", 30 * time.Second}, {"0", 0}, {"-1", time.Hour}, {"x", time.Hour}} {
		if got := Limit(c.v, time.Hour); got != c.want {
			t.Errorf("TILEGO_HANG_S=%q: %v, want %v", c.v, got, c.want)
		}
	}
}
