package stats

import "math"

// Round rounds x to digits decimal places, half away from zero: the
// precision a stored document keeps (seconds to the millisecond, rates to
// the hundredth), so that the same figure reads the same in every document.
func Round(x float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}
