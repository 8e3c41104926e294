// Package webhook delegates screening to an external classifier over HTTP:
// a vendor's API or the operator's own service.
//
// Protocol. The scanner POSTs application/json
//
//	{"text": "...", "direction": "input"|"output", "role": "user"|...}
//
// and expects a 2xx answer of at most 1 MiB:
//
//	{"detected": true, "score": 0.93, "reason": "...",
//	 "matches": [{"start": 0, "end": 12, "kind": "TOXIC"}]}
//
// where start and end are byte offsets into text, on UTF-8 boundaries,
// 0 <= start < end <= len(text), and score is in 0..1 (default 1 when
// detected). Anything else is an error, as are transport failures, non-2xx
// statuses and timeouts: errors are returned wrapped, never turned into a
// verdict, so the endpoint's fail mode (open or closed) decides.
//
// Concurrency. Organisations cap how many custom and vendored scanner calls
// run at once (feature blueTeam.customScanners). The caps are Limiters the
// caller shares between all webhook scanners of an organisation and hands to
// New; Config.Vendored picks which one applies.
package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/promptwall/promptwall/internal/utf8text"
	"github.com/promptwall/promptwall/scanner"
)

// DefaultType is the detector family reported when Config.Type is empty.
const DefaultType = "webhook"

// MaxResponseBytes bounds the classifier's answer.
const MaxResponseBytes = 1 << 20

// Sentinel errors, wrapped by Scan and New.
var (
	// ErrConfig: the configuration is invalid.
	ErrConfig = errors.New("webhook: invalid config")
	// ErrConcurrencyLimit: no call slot freed up before the deadline.
	ErrConcurrencyLimit = errors.New("webhook: concurrency limit reached")
	// ErrStatus: the classifier answered with a non-2xx status.
	ErrStatus = errors.New("webhook: classifier returned an error status")
	// ErrResponseTooLarge: the answer exceeded MaxResponseBytes.
	ErrResponseTooLarge = errors.New("webhook: response too large")
	// ErrInvalidResponse: the answer is not valid JSON of the protocol, or
	// its offsets, kinds or score are out of range.
	ErrInvalidResponse = errors.New("webhook: invalid response")
)

// Duration is a time.Duration read from JSON as a Go duration string
// ("2s", "750ms") or as an integer number of milliseconds.
type Duration time.Duration

// UnmarshalJSON implements json.Unmarshaler.
func (d *Duration) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		v, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("duration %q: %w", s, err)
		}
		*d = Duration(v)
		return nil
	}
	ms, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return fmt.Errorf("duration %s: want a string like \"2s\" or integer milliseconds", b)
	}
	*d = Duration(time.Duration(ms) * time.Millisecond)
	return nil
}

// MarshalJSON implements json.Marshaler, as a duration string.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// Config configures one external classifier.
type Config struct {
	// Type names the detector family in results (data.type), lower snake
	// case, so that several classifiers can be told apart. Default
	// "webhook".
	Type string `json:"type,omitempty"`
	// URL is the classifier's http or https endpoint. Required.
	URL string `json:"url,omitempty"`
	// Timeout bounds one call, including the wait for a concurrency slot.
	// A Go duration string ("2s") or integer milliseconds. Default "2s".
	Timeout Duration `json:"timeout,omitempty"`
	// Headers are added to every request (for example an Authorization
	// header with the vendor's key). Default: none.
	Headers map[string]string `json:"headers,omitempty"`
	// Vendored marks a third-party vendor's classifier: the organisation's
	// vendored-scanner cap applies instead of the custom-scanner cap.
	// Default false.
	Vendored bool `json:"vendored,omitempty"`
}

// Options are the scanner's dependencies, which do not come from JSON.
type Options struct {
	// Client sends the requests. Default: a client with no timeout of its
	// own (Config.Timeout bounds each call).
	Client *http.Client
	// Custom and Vendored cap the concurrent calls of the organisation's
	// custom and vendored classifiers. Nil means no cap.
	Custom, Vendored *Limiter
}

// Scanner calls an external classifier. It is safe for concurrent use.
type Scanner struct {
	typ     string
	url     string
	timeout time.Duration
	headers http.Header
	client  *http.Client
	limiter *Limiter
}

// New validates cfg and builds the scanner.
func New(cfg Config, opts Options) (*Scanner, error) {
	s := &Scanner{typ: cfg.Type, url: cfg.URL, timeout: time.Duration(cfg.Timeout), client: opts.Client, limiter: opts.Custom}
	if s.typ == "" {
		s.typ = DefaultType
	}
	for _, c := range s.typ {
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_') {
			return nil, fmt.Errorf("%w: type %q must be lower snake case", ErrConfig, cfg.Type)
		}
	}
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w: url %q must be an absolute http or https URL", ErrConfig, cfg.URL)
	}
	if s.timeout == 0 {
		s.timeout = 2 * time.Second
	}
	if s.timeout < 0 {
		return nil, fmt.Errorf("%w: timeout must be positive", ErrConfig)
	}
	s.headers = http.Header{}
	for k, v := range cfg.Headers {
		if k == "" || strings.ContainsAny(k, " \r\n:") || strings.ContainsAny(v, "\r\n") {
			return nil, fmt.Errorf("%w: invalid header %q", ErrConfig, k)
		}
		s.headers.Set(k, v)
	}
	if s.client == nil {
		s.client = &http.Client{}
	}
	if cfg.Vendored {
		s.limiter = opts.Vendored
	}
	return s, nil
}

// Type implements scanner.Scanner.
func (s *Scanner) Type() string { return s.typ }

type request struct {
	Text      string `json:"text"`
	Direction string `json:"direction"`
	Role      string `json:"role"`
}

type response struct {
	Detected bool     `json:"detected"`
	Score    *float64 `json:"score"`
	Reason   string   `json:"reason"`
	Matches  []struct {
		Start *int   `json:"start"`
		End   *int   `json:"end"`
		Kind  string `json:"kind"`
	} `json:"matches"`
}

// Scan implements scanner.Scanner.
func (s *Scanner) Scan(ctx context.Context, t *scanner.Target) (scanner.Finding, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	if err := s.limiter.Acquire(ctx); err != nil {
		return scanner.Finding{}, err
	}
	defer s.limiter.Release()

	text := t.Text.Original
	body, err := json.Marshal(request{Text: text, Direction: string(t.Direction), Role: string(t.Role)})
	if err != nil {
		return scanner.Finding{}, fmt.Errorf("webhook: encode request: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, bytes.NewReader(body))
	if err != nil {
		return scanner.Finding{}, fmt.Errorf("webhook: %w", err)
	}
	for k, v := range s.headers {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		return scanner.Finding{}, s.wrapCtx(ctx, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes+1))
	if err != nil {
		return scanner.Finding{}, s.wrapCtx(ctx, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return scanner.Finding{}, fmt.Errorf("%w: %s", ErrStatus, resp.Status)
	}
	if len(raw) > MaxResponseBytes {
		return scanner.Finding{}, fmt.Errorf("%w: more than %d bytes", ErrResponseTooLarge, MaxResponseBytes)
	}
	return parse(raw, text, s.typ)
}

// wrapCtx reports a deadline hit as the engine's timeout.
func (s *Scanner) wrapCtx(ctx context.Context, err error) error {
	if ctx.Err() == context.DeadlineExceeded {
		return fmt.Errorf("webhook: %w after %v: %w", scanner.ErrTimeout, s.timeout, err)
	}
	return fmt.Errorf("webhook: %w", err)
}

// parse validates the classifier's answer against the text it judged.
func parse(raw []byte, text, typ string) (scanner.Finding, error) {
	var r response
	if err := json.Unmarshal(raw, &r); err != nil {
		return scanner.Finding{}, fmt.Errorf("%w: %w", ErrInvalidResponse, err)
	}
	f := scanner.Finding{Detected: r.Detected, Reason: utf8text.Truncate(r.Reason, 200)}
	if r.Score != nil {
		if *r.Score < 0 || *r.Score > 1 {
			return scanner.Finding{}, fmt.Errorf("%w: score %v outside 0..1", ErrInvalidResponse, *r.Score)
		}
		f.Score = *r.Score
	} else if r.Detected {
		f.Score = 1
	}
	defaultKind := strings.ToUpper(typ)
	for i, m := range r.Matches {
		if m.Start == nil || m.End == nil {
			return scanner.Finding{}, fmt.Errorf("%w: match %d lacks start or end", ErrInvalidResponse, i)
		}
		start, end := *m.Start, *m.End
		if start < 0 || end > len(text) || start >= end {
			return scanner.Finding{}, fmt.Errorf("%w: match %d [%d,%d) outside the text of %d bytes", ErrInvalidResponse, i, start, end, len(text))
		}
		if !utf8.RuneStart(text[start]) || end < len(text) && !utf8.RuneStart(text[end]) {
			return scanner.Finding{}, fmt.Errorf("%w: match %d [%d,%d) splits a UTF-8 character", ErrInvalidResponse, i, start, end)
		}
		kind := m.Kind
		if kind == "" {
			kind = defaultKind
		}
		for _, c := range kind {
			if !('A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_') {
				return scanner.Finding{}, fmt.Errorf("%w: match %d kind %.40q is not upper snake case", ErrInvalidResponse, i, kind)
			}
		}
		f.Matches = append(f.Matches, scanner.Match{Start: start, End: end, Kind: kind, Score: f.Score})
	}
	if len(f.Matches) > 0 && !f.Detected {
		return scanner.Finding{}, fmt.Errorf("%w: matches given but detected is false", ErrInvalidResponse)
	}
	return f, nil
}

var _ scanner.Scanner = (*Scanner)(nil)

// HonoursContext tells the pipeline this scanner waits on the network and
// honours its context, so it gets its own deadline and overlaps with the
// in-process scanners.
func (s *Scanner) HonoursContext() bool { return true }
