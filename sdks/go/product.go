package keyward

import "time"

// Product names the product a lease runs; a field the server does not know is "".
type Product struct {
	CRMProductID string `json:"crmProductId"`
	ProductURI   string `json:"productUri"`
	ProductName  string `json:"productName"`
}

// Limits are the license's limits; nil means no limit.
type Limits struct {
	// Concurrent is the number of seats (limitConcurrent).
	Concurrent *int64 `json:"concurrent"`
	// TimeDurationSeconds is the accumulated usage allowed, in seconds.
	TimeDurationSeconds *int64 `json:"timeDurationSeconds"`
	// Amount is the consumption allowed (limitAmount).
	Amount *int64 `json:"amount"`
	// StartDate and EndDate bound the license, in epoch milliseconds; see Start and End.
	StartDate *int64 `json:"startDate"`
	EndDate   *int64 `json:"endDate"`
}

// Start is when the license starts, and false when it has no start.
func (l Limits) Start() (time.Time, bool) { return millis(l.StartDate) }

// End is when the license ends, and false when it has no end.
func (l Limits) End() (time.Time, bool) { return millis(l.EndDate) }

func millis(ms *int64) (time.Time, bool) {
	if ms == nil {
		return time.Time{}, false
	}
	return time.UnixMilli(*ms), true
}
