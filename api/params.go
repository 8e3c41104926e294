package api

import (
	"errors"
	"net/url"
	"sort"
	"strconv"
	"time"

	"github.com/promptwall/promptwall/store"
)

// params reads a query string strictly: unknown names, a single-valued
// parameter given twice, and malformed values are all 400s, because a typo
// silently ignored (onlyuser=false, limt=5) returns a different list than
// the caller believes it asked for.
type params struct {
	vals url.Values
}

func parseParams(raw string, single, multi []string) (*params, *apiError) {
	vals, err := url.ParseQuery(raw)
	if err != nil {
		return nil, badParam("", "malformed query string")
	}
	known := make(map[string]bool, len(single)+len(multi))
	for _, n := range multi {
		known[n] = true
	}
	for _, n := range single {
		known[n] = true
		if len(vals[n]) > 1 {
			return nil, badParam(n, "parameter %s may be given only once", n)
		}
	}
	// Sorted, so the same bad request always names the same parameter.
	names := make([]string, 0, len(vals))
	for n := range vals {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if !known[n] {
			return nil, badParam(n, "unknown parameter %s", n)
		}
	}
	return &params{vals: vals}, nil
}

func (p *params) str(name string) (string, bool) {
	v, ok := p.vals[name]
	if !ok {
		return "", false
	}
	return v[0], true
}

// boolean accepts exactly "true" or "false".
func (p *params) boolean(name string, def bool) (bool, *apiError) {
	v, ok := p.str(name)
	switch {
	case !ok:
		return def, nil
	case v == "true":
		return true, nil
	case v == "false":
		return false, nil
	}
	return false, badParam(name, "%s must be true or false", name)
}

func (p *params) intRange(name string, def, lo, hi int) (int, *apiError) {
	v, ok := p.str(name)
	if !ok {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, badParam(name, "%s must be an integer from %d to %d", name, lo, hi)
	}
	return n, nil
}

func (p *params) timestamp(name string) (time.Time, *apiError) {
	v, ok := p.str(name)
	if !ok {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return time.Time{}, badParam(name, "%s must be an RFC 3339 time such as 2026-11-22T10:04:05.123Z", name)
	}
	return t, nil
}

// ids returns the values of a repeated id parameter; an empty value is an
// error rather than a filter for records without that id.
func (p *params) ids(name string) ([]string, *apiError) {
	v := p.vals[name]
	for _, s := range v {
		if s == "" {
			return nil, badParam(name, "%s must not be empty", name)
		}
	}
	return v, nil
}

// listError answers a failed listing: a cursor or limit the store refused
// is the caller's error, anything else the server's.
func listError(err error) *apiError {
	switch {
	case errors.Is(err, store.ErrBadCursor):
		return badParam("cursor", "cursor is invalid or belongs to a query with other parameters")
	case errors.Is(err, store.ErrInvalidLimit):
		return badParam("limit", "limit must be an integer from 1 to %d", store.MaxLimit)
	}
	return internal(err)
}
