package keyward

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// Lease statuses a check-out answers.
const (
	// StatusGranted: a new seat.
	StatusGranted = "granted"
	// StatusResumed: the live lease this holder and machine already had (no second seat).
	StatusResumed = "resumed"
)

// CheckOutRequest asks for a seat of a product on this machine.
type CheckOutRequest struct {
	// Fingerprint names the machine: 8–256 printable ASCII characters of the software's choosing
	// (a hash of hardware ids, say). Required.
	Fingerprint string
	// AssetNum is the lock's asset number (a lock holder), or which of a member's assets to use.
	AssetNum string
	// CRMProductID and/or ProductURI name the product; at least one is required.
	CRMProductID string
	ProductURI   string
	// OfflineDays asks for a signed offline lease valid that many days (at most the application's
	// setting, else 90011); 0 for none. The lease's exp may be earlier: see LeaseClaims.ExpBound.
	OfflineDays int
	// UserToken makes a member the holder: his password-grant token issued to the same
	// application. Sent with the check-out only.
	UserToken string
}

type checkOutBody struct {
	Fingerprint  string `json:"fingerprint"`
	CRMProductID string `json:"crmProductId,omitempty"`
	ProductURI   string `json:"productUri,omitempty"`
	AssetNum     string `json:"assetNum,omitempty"`
	OfflineDays  int    `json:"offlineDays,omitempty"`
}

// Lease is a seat checked out by Session.CheckOut: one running copy on one machine. Keep it alive
// with KeepAlive (or Heartbeat at HeartbeatInterval), and give the seat back with CheckIn or Close
// when the program ends:
//
//	lease, err := session.CheckOut(ctx, request)
//	if err != nil { … }
//	defer lease.Close()
//
// Its methods are safe for concurrent use.
type Lease struct {
	// ID is the lease's id (also the sub and jti of its offline lease).
	ID string
	// Status is StatusGranted or StatusResumed.
	Status string
	// AssetNum is the asset whose product the lease runs.
	AssetNum string
	// Fingerprint is the machine the lease was checked out for.
	Fingerprint string
	Product     Product
	Limits      Limits
	// OfflineLease is the signed offline lease (a compact JWS) when OfflineDays was asked for,
	// else "". Verify it with VerifyLease and keep it with SaveLease.
	OfflineLease string

	session *Session

	mu          sync.Mutex
	expiresAt   time.Time
	interval    time.Duration
	usedSeconds int64
	ended       bool
	loops       map[*keepAlive]struct{}
}

type leaseAnswer struct {
	LeaseID                  string  `json:"leaseId"`
	Status                   string  `json:"status"`
	AssetNum                 string  `json:"assetNum"`
	ExpiresAt                int64   `json:"expiresAt"`
	HeartbeatIntervalSeconds int64   `json:"heartbeatIntervalSeconds"`
	Product                  Product `json:"product"`
	Limits                   Limits  `json:"limits"`
	OfflineLease             *string `json:"offlineLease"`
}

// CheckOut asks for a seat: it answers the lease when a seat is free and the license holds, and an
// *APIError otherwise (ErrSeatsInUse, ErrNotEntitled, ErrAssetDisabled, ErrLicenseEnded, …).
func (s *Session) CheckOut(ctx context.Context, request CheckOutRequest) (*Lease, error) {
	var header http.Header
	if request.UserToken != "" {
		header = http.Header{"Usertoken": {request.UserToken}}
	}
	body := checkOutBody{
		Fingerprint:  request.Fingerprint,
		CRMProductID: request.CRMProductID,
		ProductURI:   request.ProductURI,
		AssetNum:     request.AssetNum,
		OfflineDays:  request.OfflineDays,
	}
	var answer leaseAnswer
	if err := s.callWithRetries(ctx, http.MethodPost, "/runtime/v1/leases", header, body, &answer); err != nil {
		return nil, err
	}
	if answer.LeaseID == "" {
		return nil, &NetworkError{Op: "POST /runtime/v1/leases", HTTPStatus: http.StatusOK,
			Err: errors.New("unexpected answer: no leaseId")}
	}
	lease := &Lease{
		ID:          answer.LeaseID,
		Status:      answer.Status,
		AssetNum:    answer.AssetNum,
		Fingerprint: request.Fingerprint,
		Product:     answer.Product,
		Limits:      answer.Limits,
		session:     s,
		expiresAt:   time.UnixMilli(answer.ExpiresAt),
		interval:    time.Duration(answer.HeartbeatIntervalSeconds) * time.Second,
	}
	if answer.OfflineLease != nil {
		lease.OfflineLease = *answer.OfflineLease
	}
	return lease, nil
}

// ExpiresAt is when the lease expires unless a heartbeat extends it.
func (l *Lease) ExpiresAt() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.expiresAt
}

// HeartbeatInterval is how often the server asks for a heartbeat (a fifth of the lease's life).
func (l *Lease) HeartbeatInterval() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.interval
}

// UsedSeconds is the lease's accumulated use, as of its last heartbeat or check-in.
func (l *Lease) UsedSeconds() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.usedSeconds
}

// Ended reports whether the lease is over: checked in, or refused by the server as revoked,
// expired or unknown.
func (l *Lease) Ended() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ended
}

func (l *Lease) path(action string) string {
	return "/runtime/v1/leases/" + url.PathEscape(l.ID) + "/" + action
}

// judge records that the server ended the lease when err says so, and answers err.
func (l *Lease) judge(err error) error {
	if endsLease(err) {
		l.mu.Lock()
		l.ended = true
		l.mu.Unlock()
	}
	return err
}

// HeartbeatResult is a heartbeat's answer.
type HeartbeatResult struct {
	ExpiresAt         time.Time
	HeartbeatInterval time.Duration
	UsedSeconds       int64
}

// Heartbeat extends the lease. The server re-judges the license: an *APIError ErrLeaseRevoked
// (90009, Cause says why), ErrLeaseExpired (90010) or ErrLeaseNotFound (90008) means the lease is
// over and the software must stop using the product.
func (l *Lease) Heartbeat(ctx context.Context) (*HeartbeatResult, error) {
	var answer struct {
		ExpiresAt                int64 `json:"expiresAt"`
		HeartbeatIntervalSeconds int64 `json:"heartbeatIntervalSeconds"`
		UsedSeconds              int64 `json:"usedSeconds"`
	}
	body := map[string]string{"fingerprint": l.Fingerprint}
	if err := l.session.callWithRetries(ctx, http.MethodPost, l.path("heartbeat"), nil, body, &answer); err != nil {
		return nil, l.judge(err)
	}
	result := &HeartbeatResult{
		ExpiresAt:         time.UnixMilli(answer.ExpiresAt),
		HeartbeatInterval: time.Duration(answer.HeartbeatIntervalSeconds) * time.Second,
		UsedSeconds:       answer.UsedSeconds,
	}
	l.mu.Lock()
	l.expiresAt, l.usedSeconds = result.ExpiresAt, result.UsedSeconds
	if result.HeartbeatInterval > 0 {
		l.interval = result.HeartbeatInterval
	}
	l.mu.Unlock()
	return result, nil
}

// Consumption is the product's consumption after a Consume.
type Consumption struct {
	// Consumed is the product's total consumption.
	Consumed int64 `json:"consumed"`
	// Limit and Remaining are nil when the product has no limitAmount.
	Limit     *int64 `json:"limit"`
	Remaining *int64 `json:"remaining"`
}

// Consume adds amount (1 – 10⁹) to the product's consumption, atomically; past the license's
// amount it is refused with ErrAmountUsedUp (90007) and nothing is added. It is counted once: the
// call carries an Idempotency-Key (random, or WithIdempotencyKey's), the same on each retry, so an
// attempt whose answer was lost is answered, not counted, when sent again.
func (l *Lease) Consume(ctx context.Context, amount int64, opts ...ConsumeOption) (*Consumption, error) {
	var options consumeOptions
	for _, opt := range opts {
		opt(&options)
	}
	key := options.idempotencyKey
	if key == "" {
		var err error
		if key, err = NewIdempotencyKey(); err != nil {
			return nil, &NetworkError{Op: "POST " + l.path("consume"), Err: fmt.Errorf("idempotency key: %w", err)}
		}
	} else if !validIdempotencyKey(key) {
		return nil, invalidKey()
	}
	body := struct {
		Fingerprint string `json:"fingerprint"`
		Amount      int64  `json:"amount"`
	}{l.Fingerprint, amount}
	var answer Consumption
	err := l.session.callWithRetries(ctx, http.MethodPost, l.path("consume"), idempotencyHeader(key), body, &answer)
	if err != nil {
		return nil, l.judge(err)
	}
	return &answer, nil
}

// CheckInResult is a check-in's answer.
type CheckInResult struct {
	UsedSeconds int64
	// SeatFreeAt is when the seat is free for another machine: now for an online lease, the
	// offline lease's exp for an offline one (unless the application has early return).
	SeatFreeAt time.Time
}

// CheckIn ends the lease and charges its use; it stops the lease's KeepAlive loops first.
// Heartbeats and Consume then answer ErrLeaseNotFound.
func (l *Lease) CheckIn(ctx context.Context) (*CheckInResult, error) {
	l.stopLoops()
	var answer struct {
		UsedSeconds int64 `json:"usedSeconds"`
		SeatFreeAt  int64 `json:"seatFreeAt"`
	}
	body := map[string]string{"fingerprint": l.Fingerprint}
	if err := l.session.callWithRetries(ctx, http.MethodPost, l.path("check-in"), nil, body, &answer); err != nil {
		return nil, l.judge(err)
	}
	l.mu.Lock()
	l.ended, l.usedSeconds = true, answer.UsedSeconds
	l.mu.Unlock()
	return &CheckInResult{UsedSeconds: answer.UsedSeconds, SeatFreeAt: time.UnixMilli(answer.SeatFreeAt)}, nil
}

// CloseTimeout bounds the check-in Close makes.
const CloseTimeout = 15 * time.Second

// Close checks the lease in unless it is over already (io.Closer, for defer). A lease the server
// already ended (revoked, expired, unknown) closes without error. Calling it again does nothing.
func (l *Lease) Close() error {
	if l.Ended() {
		l.stopLoops()
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), CloseTimeout)
	defer cancel()
	_, err := l.CheckIn(ctx)
	if endsLease(err) {
		return nil
	}
	return err
}

// KeepAliveOption configures KeepAlive.
type KeepAliveOption func(*keepAlive)

// OnHeartbeat calls fn after each heartbeat the loop sends: with the answer, or with the error
// (a network failure the loop rides out, or the refusal that ends it). fn runs on the loop's
// goroutine: keep it short, and do not call CheckIn or Close from it.
func OnHeartbeat(fn func(*HeartbeatResult, error)) KeepAliveOption {
	return func(k *keepAlive) { k.onBeat = fn }
}

// Every sends the heartbeats every d instead of at the server's interval (d > 0; tests).
func Every(d time.Duration) KeepAliveOption {
	return func(k *keepAlive) {
		if d > 0 {
			k.every = d
		}
	}
}

// minInterval keeps a loop from spinning when a server answers no interval.
const minInterval = time.Second

// minBeatTimeout is the least time a KeepAlive heartbeat is given (else its interval).
const minBeatTimeout = 5 * time.Second

type keepAlive struct {
	onBeat func(*HeartbeatResult, error)
	every  time.Duration
	cancel context.CancelFunc
}

// KeepAlive sends a heartbeat every interval the server asks for, on a goroutine of its own,
// until ctx is done, the lease is checked in, or the server ends the lease. The channel it answers
// receives the error that ended the lease (ErrLeaseRevoked, ErrLeaseExpired, ErrLeaseNotFound:
// stop using the product) and is then closed; it is closed without a value when the loop was
// stopped. A heartbeat that fails otherwise (the network, the server's 500) is retried at the
// next interval: the lease lives five intervals, so a few lost heartbeats cost nothing.
//
//	ctx, stop := context.WithCancel(ctx)
//	ended := lease.KeepAlive(ctx)
//	… select { case err := <-ended: … the license was withdrawn … }
//	stop(); <-ended // stopped
func (l *Lease) KeepAlive(ctx context.Context, opts ...KeepAliveOption) <-chan error {
	ctx, cancel := context.WithCancel(ctx)
	k := &keepAlive{cancel: cancel}
	for _, opt := range opts {
		opt(k)
	}
	out := make(chan error, 1)
	l.mu.Lock()
	if l.ended {
		l.mu.Unlock()
		cancel()
		close(out)
		return out
	}
	if l.loops == nil {
		l.loops = make(map[*keepAlive]struct{})
	}
	l.loops[k] = struct{}{}
	l.mu.Unlock()
	go func() {
		defer close(out)
		defer func() {
			l.mu.Lock()
			delete(l.loops, k)
			l.mu.Unlock()
			cancel()
		}()
		if err := l.keepAlive(ctx, k); err != nil {
			out <- err
		}
	}()
	return out
}

func (l *Lease) keepAlive(ctx context.Context, k *keepAlive) error {
	interval := func() time.Duration {
		if k.every > 0 {
			return k.every
		}
		if d := l.HeartbeatInterval(); d >= minInterval {
			return d
		}
		return minInterval
	}
	timer := time.NewTimer(interval())
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-timer.C:
		}
		// A heartbeat that hangs must not hold the loop past the next one.
		timeout := interval()
		if timeout < minBeatTimeout {
			timeout = minBeatTimeout
		}
		beatCtx, cancel := context.WithTimeout(ctx, timeout)
		result, err := l.Heartbeat(beatCtx)
		cancel()
		if ctx.Err() != nil {
			return nil // stopped while the heartbeat was on its way
		}
		if k.onBeat != nil {
			k.onBeat(result, err)
		}
		if endsLease(err) {
			return err
		}
		timer.Reset(interval())
	}
}

// stopLoops stops the lease's KeepAlive loops.
func (l *Lease) stopLoops() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for k := range l.loops {
		k.cancel()
	}
}
