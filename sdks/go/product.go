package keyward

import (
	"encoding/json"
	"time"
)

// Product names the product a lease runs; a field the server does not know is "".
type Product struct {
	CRMProductID string `json:"crmProductId"`
	ProductURI   string `json:"productUri"`
	ProductName  string `json:"productName"`
}

// Limits are the license's limits; nil means no limit.
type Limits struct {
	// Concurrent is the number of seats (limitConcurrent).
	Concurrent *int64
	// TimeDurationSeconds is the accumulated usage allowed, in seconds.
	TimeDurationSeconds *int64
	// Amount is the consumption allowed (limitAmount).
	Amount *int64
	// StartDate and EndDate bound the license.
	StartDate *time.Time
	EndDate   *time.Time
}

// limitsJSON is Limits as the server and a lease's claims carry them: dates in epoch milliseconds.
type limitsJSON struct {
	Concurrent          *int64 `json:"concurrent"`
	TimeDurationSeconds *int64 `json:"timeDurationSeconds"`
	Amount              *int64 `json:"amount"`
	StartDateMs         *int64 `json:"startDate"`
	EndDateMs           *int64 `json:"endDate"`
}

// UnmarshalJSON reads the limits as Keyward sends them (dates in epoch milliseconds).
func (l *Limits) UnmarshalJSON(data []byte) error {
	var wire limitsJSON
	if err := json.Unmarshal(data, &wire); err != nil {
		return err
	}
	*l = Limits{
		Concurrent: wire.Concurrent, TimeDurationSeconds: wire.TimeDurationSeconds, Amount: wire.Amount,
		StartDate: fromMillis(wire.StartDateMs), EndDate: fromMillis(wire.EndDateMs),
	}
	return nil
}

// MarshalJSON writes the limits as Keyward sends them, so they read back the same.
func (l Limits) MarshalJSON() ([]byte, error) {
	return json.Marshal(limitsJSON{
		Concurrent: l.Concurrent, TimeDurationSeconds: l.TimeDurationSeconds, Amount: l.Amount,
		StartDateMs: toMillis(l.StartDate), EndDateMs: toMillis(l.EndDate),
	})
}

func fromMillis(ms *int64) *time.Time {
	if ms == nil {
		return nil
	}
	t := time.UnixMilli(*ms)
	return &t
}

func toMillis(t *time.Time) *int64 {
	if t == nil {
		return nil
	}
	ms := t.UnixMilli()
	return &ms
}
