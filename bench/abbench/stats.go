package main

import (
	"fmt"
	"slices"
	"time"
)

// sample is one series of wall times.
type sample []time.Duration

// pct returns the p-quantile (0 ≤ p ≤ 1) by the nearest-rank method on a
// sorted copy, and 0 for an empty sample. pct(0.5) of an even-sized sample
// is the mean of the two middle values, the usual median.
func (s sample) pct(p float64) time.Duration {
	if len(s) == 0 {
		return 0
	}
	c := slices.Clone(s)
	slices.Sort(c)
	if p == 0.5 && len(c)%2 == 0 {
		return (c[len(c)/2-1] + c[len(c)/2]) / 2
	}
	i := int(p*float64(len(c)) + 0.5)
	return c[min(max(i-1, 0), len(c)-1)]
}

func (s sample) median() time.Duration { return s.pct(0.5) }

// spread is the interquartile range, printed beside each median so that a
// reader can judge how noisy the machine was.
func (s sample) spread() time.Duration { return s.pct(0.75) - s.pct(0.25) }

// ms formats d in milliseconds with two decimals.
func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }

// ratio formats a/b, or "n/a" when b is zero.
func ratio(a, b time.Duration) string {
	if b == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", float64(a)/float64(b))
}
