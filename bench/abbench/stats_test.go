package main

import (
	"testing"
	"time"
)

func TestPct(t *testing.T) {
	ms := func(v ...int) sample {
		s := make(sample, len(v))
		for i, x := range v {
			s[i] = time.Duration(x) * time.Millisecond
		}
		return s
	}
	for _, c := range []struct {
		name string
		s    sample
		p    float64
		want time.Duration
	}{
		{"empty", nil, 0.5, 0},
		{"one", ms(7), 0.5, 7 * time.Millisecond},
		{"odd median unsorted", ms(9, 1, 5), 0.5, 5 * time.Millisecond},
		{"even median is the middle mean", ms(4, 1, 3, 2), 0.5, 2500 * time.Microsecond},
		{"p25 nearest rank", ms(1, 2, 3, 4), 0.25, 1 * time.Millisecond},
		{"p75 nearest rank", ms(1, 2, 3, 4), 0.75, 3 * time.Millisecond},
		{"p99 of few is the max", ms(3, 1, 2), 0.99, 3 * time.Millisecond},
		{"p0 is the min", ms(3, 1, 2), 0, 1 * time.Millisecond},
	} {
		if got := c.s.pct(c.p); got != c.want {
			t.Errorf("%s: pct(%v) = %v, want %v", c.name, c.p, got, c.want)
		}
	}
}

func TestPctDoesNotReorder(t *testing.T) {
	s := sample{3, 1, 2}
	s.median()
	if s[0] != 3 || s[1] != 1 || s[2] != 2 {
		t.Fatalf("pct sorted its receiver: %v", s)
	}
}

func TestRatio(t *testing.T) {
	if got := ratio(3*time.Millisecond, 2*time.Millisecond); got != "1.50" {
		t.Errorf("ratio = %q", got)
	}
	if got := ratio(time.Millisecond, 0); got != "n/a" {
		t.Errorf("ratio by zero = %q", got)
	}
}
